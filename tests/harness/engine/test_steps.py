"""harness.engine.steps: `then` steps (merged requests, `${first.*}` references, labels) and `${data_url:…}` payloads."""

from __future__ import annotations

import base64

import pytest

from harness.checks import Violation
from harness.engine.steps import data_url, expand_data_urls, label, resolve_first, step_request
from harness.engine.target import Target, not_applicable_reason
from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.spec.model import Needs, Rule, Source


@pytest.mark.parametrize(
    ("media", "size"), [("image/png", 5_300_000), ("image/png", 10), ("application/pdf", 64)]
)
def test_data_url_decodes_to_exactly_the_size(media: str, size: int) -> None:
    url = data_url(media, size)
    head, _, payload = url.partition(",")
    assert head == f"data:{media};base64"
    data = base64.b64decode(payload, validate=True)
    assert len(data) == size
    magic = {"image/png": b"\x89PNG", "application/pdf": b"%PDF"}[media]
    assert data.startswith(magic[:size])


@pytest.mark.parametrize("size", [4_500_000, 100])
def test_a_png_data_url_is_a_whole_png(size: int) -> None:
    """Live, a real provider decodes the picture: signature, IHDR, padding, IDAT, IEND, each CRC right."""
    import struct
    import zlib

    data = base64.b64decode(data_url("image/png", size).partition(",")[2])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    kinds, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length : at + 12 + length])[0] == zlib.crc32(kind + body)
        if kind == b"IDAT":
            assert zlib.decompress(body) == b"\x00" * 5  # filter byte + one RGBA pixel
        kinds.append(kind)
        at += 12 + length
    assert at == len(data) == size
    assert kinds == [b"IHDR", b"gcPd", b"IDAT", b"IEND"]


def test_expand_data_urls_in_text() -> None:
    text = expand_data_urls('{"url": "${data_url:image/png:100}"}')
    assert text.startswith('{"url": "data:image/png;base64,') and "${" not in text


def test_step_request_merges_headers_and_body_without_changing_the_first() -> None:
    headers, body = {"authorization": "Bearer k", "x-relay-cache": "yes"}, {"model": "m", "stream": False}
    step = {"request": {"headers": {"X-Relay-Cache": None, "Idempotency-Key": "$MARKER"}, "body": {"n": 1}}}
    new_headers, new_body = step_request(headers, body, step, "[gc:a/b#12345678]")
    assert new_headers == {"authorization": "Bearer k", "idempotency-key": "[gc:a/b#12345678]"}
    assert new_body == {"model": "m", "stream": False, "n": 1}
    assert headers == {"authorization": "Bearer k", "x-relay-cache": "yes"} and body == {
        "model": "m",
        "stream": False,
    }


def _first(raw: bytes, headers: dict[str, str]) -> Exchange:
    return Exchange(
        rule_id="r/x/y",
        variant={},
        request=SentRequest("POST", "http://gw/v1/chat/completions", {}, b"{}", {}),
        response=ReceivedResponse(status=200, headers=headers, raw=raw),
    )


def test_resolve_first_reads_headers_and_the_body() -> None:
    first = _first(
        b'{"id": "chatcmpl-1", "choices": [{"index": 0}], "usage": {"total_tokens": 7}}',
        {"x-relay-request-id": "abc"},
    )
    expect = {
        "json": [{"path": "$.id", "equals": "${first.response.body.id}"}],
        "headers": {"x-id": {"not_equals": "${first.response.headers.X-Relay-Request-Id}"}},
        "text": "total ${first.response.body.usage.total_tokens} of ${first.response.body.choices.0.index}",
        "missing": "${first.response.body.nope.deeper}",
    }
    assert resolve_first(expect, first) == {
        "json": [{"path": "$.id", "equals": "chatcmpl-1"}],
        "headers": {"x-id": {"not_equals": "abc"}},
        "text": "total 7 of 0",
        "missing": None,
    }


def test_label_names_the_step() -> None:
    v = label(1, Violation("status", "status", 200, 500, "status 500, expected 200"))
    assert v.path == "then[1].status" and v.message.startswith("then[1]: ")


def test_a_capability_this_harness_lacks_is_not_applicable() -> None:
    rule = Rule(
        id="relay/x/y",
        level="MUST",
        title="t",
        source=Source(doc="relay-chat-completions", section="s", quote="q"),
        request={"body": {"model": "m", "messages": []}},
        expect={},
        needs=Needs(
            replay=False,
            models=frozenset(),
            features=frozenset(),
            without=frozenset(),
            harness=frozenset({"then", "time_travel"}),
        ),
    )
    reason = not_applicable_reason(rule, Target(gateway_url="http://gw/v1"))
    assert reason == "this harness cannot run time_travel"
