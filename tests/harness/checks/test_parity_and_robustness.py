"""`stream_matches_nonstream`, and every check kind fed garbage: violations, never exceptions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.checks import CHECKS, Violation, check_for
from harness.exchange import Exchange
from harness.surfaces.chat_completions import SURFACE as CHAT
from tests.harness.checks.exchanges import call, exchange, fixture, messages, stream


def _completion_like(name: str, change: dict[str, Any] | None = None) -> Exchange:
    document = json.loads(fixture(name))
    for path, value in (change or {}).items():
        target = document
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[last] = value
    return exchange(json.dumps(document).encode())


PARITY_GOOD = [
    ("text", "json/completion_text.json", {"include_usage": True}, "text_usage"),
    ("text-no-usage-requested", "json/completion_text.json", {}, "text"),
    (
        "tools-args-differ-only-in-spacing",
        "json/completion_tools.json",
        {"include_usage": True},
        "tools_parallel",
    ),
]


@pytest.mark.parametrize(
    ("label", "plain", "kwargs", "streamed"), PARITY_GOOD, ids=[p[0] for p in PARITY_GOOD]
)
def test_parity_holds(label: str, plain: str, kwargs: dict[str, Any], streamed: str) -> None:
    ex = stream(streamed, companion=exchange(plain), **kwargs)
    violations = list(check_for("stream_matches_nonstream", CHAT)(True, ex))
    assert violations == [], messages(violations)


PARITY_BAD = [
    ("content", {"choices.0.message.content": "Hello!"}, "text_usage", "choices[0].message.content"),
    ("finish", {"choices.0.finish_reason": "length"}, "text_usage", "choices[0].finish_reason"),
    (
        "cached-tokens-lost-in-stream",
        {"usage.prompt_tokens_details.cached_tokens": 7},
        "text_usage",
        "usage.prompt_tokens_details.cached_tokens",
    ),
    (
        "tool-name",
        {"choices.0.message.tool_calls.0.function.name": "x"},
        "tools_parallel",
        "choices[0].message.tool_calls[0].function.name",
    ),
    (
        "tool-args",
        {"choices.0.message.tool_calls.1.function.arguments": "{}"},
        "tools_parallel",
        "choices[0].message.tool_calls[1].function.arguments",
    ),
    ("tool-count", {"choices.0.message.tool_calls": []}, "tools_parallel", "choices[0].message.tool_calls"),
]


@pytest.mark.parametrize(("label", "change", "streamed", "path"), PARITY_BAD, ids=[p[0] for p in PARITY_BAD])
def test_parity_differences_are_caught(label: str, change: dict[str, Any], streamed: str, path: str) -> None:
    plain = "json/completion_tools.json" if streamed.startswith("tools") else "json/completion_text.json"
    ex = stream(streamed, companion=_completion_like(plain, change), include_usage=True)
    violations = list(check_for("stream_matches_nonstream", CHAT)(True, ex))
    assert any(v.path == path for v in violations), messages(violations)


def test_parity_without_companion_or_stream() -> None:
    assert "no non-stream companion" in messages(
        list(check_for("stream_matches_nonstream", CHAT)(True, stream("text")))
    )
    ex = exchange("json/completion_text.json", companion=exchange("json/completion_text.json"))
    assert "not a stream" in messages(list(check_for("stream_matches_nonstream", CHAT)(True, ex)))


# One plausible `expect` value per kind: garbage answers must turn into violations, not exceptions.
EXPECT: dict[str, Any] = {
    "status": 200,
    "headers": {"content-type": {"matches": "json"}, "x-request-id": {"exists": True}},
    "error": {"type": "invalid_request_error", "code": None, "param": None, "message_pattern": "x"},
    "json": [
        {"path": "$.choices[0].message.content", "equals": "${answer.text}"},
        {"path": "$..id", "type": "string"},
    ],
    "chunks": [{"path": "$[0].choices[0].delta.role", "equals": "assistant"}],
    "schema": True,
    "shape": True,
    "stream_order": {"usage_chunk": "required", "error": False},
    "usage": {
        "prompt_tokens": "upstream.input_tokens + upstream.cache_read_input_tokens",
        "total_tokens": "usage.a + usage.b",
    },
    "finish_reason": "stop",
    "upstream_calls": {"min": 1},
    "upstream": [{"path": "$.messages[0].content", "exists": True, "call": "each"}],
    "upstream_headers": {"anthropic-version": {"equals": "2026-10-21"}},
    "upstream_schema": "anthropic.messages.request",
    "stream_matches_nonstream": True,
    "body": {"contains": "x"},
    "upstream_raw": {"matches": "^\\{", "call": "each"},
    "upstream_compare": [{"path": "$.messages[0]", "same_as": "$.messages[-1]", "order": True}],
    "listener": {"connections": 0},
    "elapsed": {"max": 5},
    "streamed": {"fraction": 0.5, "seconds": 0.1},
    "upstream_path": [{"matches": "/messages$"}, {"call": "each", "stream": True, "matches": "alt=sse"}],
    "provider_accepts": True,
    "live_usage": ["prompt_tokens", "prompt_tokens_details.cached_tokens"],
    "live_tool_arguments": {"name": "get_weather"},
    "live_response_format": True,
    "live_text": True,
    # What a gateway adds (harness/checks/gateway.py): without a set-up on the exchange, each says so.
    "forwards_headers": "^(retry-after|x-ratelimit-)",
    "own_limit": True,
    "not_retried": ["openai-sdk", "anthropic-sdk", "codex", "claude-code"],
    "cost": {"priced": True},
}

GARBAGE = {
    "no-response": exchange(b"", status=None, transport_error="timeout after 30s", upstream=None),
    "html-502": exchange(b"<html>502 Bad Gateway</html>", status=502, headers={"content-type": "text/html"}),
    "invalid-utf8": exchange(b"\xff\xfe\x00{", status=200),
    "json-array": exchange(b"[1, 2, 3]", status=200),
    "json-scalar": exchange(b"null", status=500),
    "wrong-types": exchange(
        b'{"id": 5, "choices": {"0": 1}, "usage": [1], "error": "boom"}',
        status=400,
        upstream=(call(raw=b"[]"),),
    ),
    "sse-garbage": exchange(b"data: {\ndata: [1]\n\nevent: x\n\n:\r\rdata", status=200, stream=True),
    "sse-wrong-types": exchange(
        b'data: {"choices": [{"delta": [], "finish_reason": 5, "index": "a"}], "usage": 3}\n\n'
        b'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": 7}, 3]}}]}\n\n'
        b'data: {"error": "flat"}\n\n',
        status=200,
        stream=True,
        answer="upstream/anthropic_tools.sse",
    ),
    "truncated-stream": stream("truncated", transport_error="connection reset", include_usage=True),
    "companion-garbage": stream("text", companion=exchange(b"<html>", status=502)),
    "served-garbage": exchange(
        "json/completion_text.json",
        upstream=(call({"model": "m"}, raw=b"\x00"),),
    ),
}


@pytest.mark.parametrize("kind", sorted(EXPECT))
@pytest.mark.parametrize("label", sorted(GARBAGE))
def test_checks_never_raise_on_garbage(kind: str, label: str) -> None:
    violations = list(check_for(kind, CHAT)(EXPECT[kind], GARBAGE[label]))
    assert all(isinstance(v, Violation) and v.check == kind and v.message for v in violations)
    # Evidence stays short enough to print.
    assert all(len(repr(v.actual)) < 600 for v in violations)


def test_every_registered_kind_is_exercised() -> None:
    assert set(EXPECT) == set(CHECKS) | set(CHAT.checks)


def test_parity_can_leave_usage_out() -> None:
    """`{usage: false}`: for profiles whose docs give streams a different usage shape."""
    change = {"usage.prompt_tokens_details.cached_tokens": 7}
    ex = stream(
        "text_usage", companion=_completion_like("json/completion_text.json", change), include_usage=True
    )
    assert list(check_for("stream_matches_nonstream", CHAT)({"usage": False}, ex)) == []
    assert list(check_for("stream_matches_nonstream", CHAT)(True, ex)) != []


def test_parity_documented_usage_reads_only_the_counts_clients_read() -> None:
    """`{usage: documented}` (audit D7): a gateway's extension usage fields may differ; a documented count may not."""
    check = check_for("stream_matches_nonstream", CHAT)
    extension = {"usage.cost": 0.0042, "usage.prompt_tokens_details.audio_tokens": 3}
    ex = stream(
        "text_usage", companion=_completion_like("json/completion_text.json", extension), include_usage=True
    )
    assert list(check({"usage": "documented"}, ex)) == []
    assert [v.path for v in check(True, ex)] != []  # the whole-object comparison sees them
    counted = {"usage.prompt_tokens_details.cached_tokens": 7}
    ex = stream(
        "text_usage", companion=_completion_like("json/completion_text.json", counted), include_usage=True
    )
    paths = [v.path for v in check({"usage": "documented"}, ex)]
    assert paths == ["usage.prompt_tokens_details.cached_tokens"]
    total = {"usage.total_tokens": 999}
    ex = stream(
        "text_usage", companion=_completion_like("json/completion_text.json", total), include_usage=True
    )
    assert [v.path for v in check({"usage": "documented"}, ex)] == ["usage.total_tokens"]
