"""harness.replay.record: re-recording cassettes against a fake Anthropic provider on loopback (nothing leaves it)."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from harness import paths, sse
from harness.replay.cassette import load_cassette
from harness.replay.record import diff_cassettes, fault_reason, main
from tests.harness.tiny_gateways import serve

# Built by concatenation so that no secret-shaped literal sits in the repository.
FAKE_KEY = "sk-" + "ant-" + "fake0000" * 4
SOURCE = paths.cassettes_dir() / "anthropic"
SCENARIOS = ("text-basic", "error-529", "stream-error-overloaded")
SSE_NAMES = [
    "message_start",
    "content_block_start",
    "ping",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
]


@dataclass
class FakeProvider:
    """What the fake answers; every request it got (headers lower-cased, parsed body)."""

    stop_reason: str = "end_turn"
    fail_status: int | None = None
    echo_key: bool = False  # a misbehaving provider that reflects the credential in a response header
    overloaded_mid_stream: bool = False  # a transient `event: error` after HTTP 200
    seen: list[tuple[dict[str, str], Any]] = field(default_factory=list)


def _usage() -> dict[str, Any]:
    return {
        "input_tokens": 27,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 20,
        "service_tier": "standard",
    }


def make_provider(fake: FakeProvider) -> Starlette:
    async def messages(request: Request) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = await request.json()
        fake.seen.append((headers, body))
        if "authorization" not in headers and "x-api-key" not in headers:
            return JSONResponse(
                {"type": "error", "error": {"type": "authentication_error", "message": "no key"}}, 401
            )
        # Fresh ids on every answer: the diff must not report them.
        rid, mid = f"req_{uuid.uuid4().hex}", f"msg_{uuid.uuid4().hex}"
        extra = {
            "request-id": rid,
            "anthropic-ratelimit-requests-remaining": str(len(fake.seen)),
            "set-cookie": "session=abc; Secure",
            "anthropic-organization-id": "org-0000",
            "retry-after": "0",
        }
        if fake.echo_key:
            extra["x-debug-auth"] = headers.get("authorization", "")
        if fake.fail_status is not None:
            error = {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            }
            return JSONResponse(error, fake.fail_status, headers=extra)
        message = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": "Cached prefixes are reused."}],
            "stop_reason": fake.stop_reason,
            "stop_sequence": None,
            "stop_details": None,
            "usage": _usage(),
        }
        if not body.get("stream"):
            return JSONResponse(message, headers=extra)

        async def events() -> AsyncIterator[bytes]:
            start_usage = {k: v for k, v in _usage().items() if k != "cache_creation"} | {"output_tokens": 1}
            start = {**message, "content": [], "stop_reason": None, "usage": start_usage}
            payloads = [
                ("message_start", {"type": "message_start", "message": start}),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                ("ping", {"type": "ping"}),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": "Cached prefixes"},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": " are reused."},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": fake.stop_reason, "stop_sequence": None},
                        "usage": {k: v for k, v in _usage().items() if k.endswith("tokens")},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
            if fake.overloaded_mid_stream:
                error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
                payloads[4:] = [("error", error)]
            for name, data in payloads:  # one event per chunk, as the API streams
                yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

        return StreamingResponse(
            events(),
            media_type="text/event-stream; charset=utf-8",
            headers={**extra, "cache-control": "no-cache"},
        )

    # gzip like the real API, so the test proves bodies are stored decoded (GZip skips text/event-stream).
    return Starlette(
        routes=[Route("/v1/messages", messages, methods=["POST"])],
        middleware=[Middleware(GZipMiddleware, minimum_size=0)],
    )


@pytest.fixture
def provider() -> Iterator[tuple[FakeProvider, str]]:
    fake = FakeProvider()
    with serve(make_provider(fake)) as url:
        yield fake, url


@pytest.fixture
def cassettes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary cassettes dir holding copies of a few shipped cassettes; the key set in the environment."""
    folder = tmp_path / "cassettes" / "anthropic"
    folder.mkdir(parents=True)
    for name in SCENARIOS:
        shutil.copy(SOURCE / f"{name}.yaml", folder / f"{name}.yaml")
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    # Other ways the SDK finds credentials or a base URL must not leak into the test.
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "cassettes"


def _record(cassettes: Path, url: str, *extra: str) -> int:
    return main(["--provider", "anthropic", "--base-url", url, "--cassettes-dir", str(cassettes), *extra])


def test_records_json_and_sse_scrubbed_with_provenance(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, url = provider
    fake.echo_key = True
    assert _record(cassettes, url, "--scenario", "anthropic/text-*") == 0
    out = capsys.readouterr().out

    path = cassettes / "anthropic" / "text-basic.yaml"
    text = path.read_text()
    assert FAKE_KEY not in text and FAKE_KEY not in out
    new = load_cassette(path)
    meta = new.metadata
    assert (meta.origin, meta.provider, meta.model) == ("recorded", "anthropic", "claude-sonnet-5-5")
    assert meta.date == _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    assert meta.api_version == fake.seen[0][0]["anthropic-version"]  # the header actually sent
    assert meta.description == "Plain text answer, stop_reason end_turn."

    # The provider saw the recorded requests, in order, with the key; the cassette holds none of it.
    assert [body["stream"] for _, body in fake.seen] == [False, True]
    assert (
        fake.seen[0][1]["messages"]
        == load_cassette(SOURCE / "text-basic.yaml").interactions[0].request.json["messages"]
    )
    for it in new.interactions:
        assert it.request.headers.get("authorization") == ("Bearer <REDACTED>",)
        assert "x-api-key" not in it.request.headers
        assert not {"host", "x-stainless-os", "x-stainless-arch"} & set(it.request.headers)
        for gone in ("set-cookie", "anthropic-organization-id", "retry-after", "content-encoding"):
            assert gone not in it.response.headers
        # vcrpy >= 9 puts its placeholder there; older vcrpy leaves it to the harness's own scrub.
        assert it.response.headers["x-debug-auth"] in (
            ("Bearer <ANTHROPIC_API_KEY>",),
            ("Bearer <REDACTED>",),
        )
        assert all(name == name.lower() for name in (*it.request.headers, *it.response.headers))

    plain, stream = new.interactions
    assert json.loads(plain.response.body)["stop_reason"] == "end_turn"  # stored decoded, not gzip
    decoded = sse.decode(stream.response.body)
    assert [ev.event for ev in decoded.events] == SSE_NAMES
    assert not decoded.problems and stream.response.body.endswith(b"\n\n")
    assert "text-basic: recorded 2 interaction(s)" in out


def test_diff_reports_changed_stop_reason_and_ignores_ids(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, url = provider
    fake.stop_reason = "max_tokens"
    assert _record(cassettes, url, "--scenario", "text-basic") == 0
    out = capsys.readouterr().out
    assert "#0 (non-stream): stop_reason end_turn → max_tokens" in out
    assert "#1 (stream): stop_reason end_turn → max_tokens" in out
    diff = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(diff) == 2, (
        out
    )  # ids, request ids, rate limits, text and delta counts all changed: not reported
    assert not any(marker in out for marker in ("msg_", "req_", "toolu_"))


def test_same_behaviour_is_no_semantic_change(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = provider
    assert _record(cassettes, url, "--scenario", "text-basic") == 0
    assert "  no semantic change" in capsys.readouterr().out


def test_fault_scenarios_are_skipped_and_reported(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, url = provider
    before = {name: (cassettes / "anthropic" / f"{name}.yaml").read_bytes() for name in SCENARIOS}
    assert _record(cassettes, url) == 0
    out = capsys.readouterr().out
    assert "anthropic/error-529: not recordable (fault scenario): interaction #0 answers HTTP 529" in out
    assert "anthropic/stream-error-overloaded: not recordable (fault scenario)" in out
    assert "summary: 1 recorded, 2 not recordable, 0 failed" in out
    assert len(fake.seen) == 2  # only text-basic's two requests reached the provider
    for name in ("error-529", "stream-error-overloaded"):
        assert (cassettes / "anthropic" / f"{name}.yaml").read_bytes() == before[name]


def test_dry_run_writes_nothing(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, url = provider
    fake.stop_reason = "max_tokens"
    path = cassettes / "anthropic" / "text-basic.yaml"
    before = path.read_bytes()
    assert _record(cassettes, url, "--scenario", "text-basic", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "would replace" in out and "stop_reason end_turn → max_tokens" in out
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(f"{n}.yaml" for n in SCENARIOS)


def test_provider_error_fails_the_scenario_and_keeps_the_old_cassette(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, url = provider
    fake.fail_status = 401
    path = cassettes / "anthropic" / "text-basic.yaml"
    before = path.read_bytes()
    assert _record(cassettes, url, "--scenario", "text-basic") == 1
    out = capsys.readouterr().out
    assert "anthropic/text-basic: FAILED at interaction #0: HTTP 401 authentication_error" in out
    assert len(fake.seen) == 1  # max_retries=0, and the scenario stops at its first failure
    assert path.read_bytes() == before
    assert FAKE_KEY not in out


def test_a_transient_mid_stream_error_is_not_recorded(
    provider: tuple[FakeProvider, str], cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, url = provider
    fake.overloaded_mid_stream = True
    path = cassettes / "anthropic" / "text-basic.yaml"
    before = path.read_bytes()
    assert _record(cassettes, url, "--scenario", "text-basic") == 1
    out = capsys.readouterr().out
    assert "FAILED: fault: the provider answered with a fault: interaction #1 ends in a mid-stream" in out
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--provider", "anthropic"], None, "ANTHROPIC_API_KEY is not set"),
        (
            ["--provider", "mistral"],
            FAKE_KEY,
            "unknown provider 'mistral' (known: anthropic, openai, gemini)",
        ),
        (["--provider", "anthropic", "--scenario", "nope-*"], FAKE_KEY, "no cassette under"),
        ([], FAKE_KEY, "required: --provider"),
    ],
    ids=["no-key", "unknown-provider", "no-scenario-matches", "no-provider"],
)
def test_configuration_errors_exit_3(
    argv: list[str],
    env: str | None,
    message: str,
    cassettes: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if env is None:
        monkeypatch.delenv("ANTHROPIC_API_KEY")
    # No provider runs here: a configuration error must stop before any request.
    assert main([*argv, "--base-url", "http://127.0.0.1:9", "--cassettes-dir", str(cassettes)]) == 3
    captured = capsys.readouterr()
    assert message in captured.err
    assert FAKE_KEY not in captured.out + captured.err


# --- the semantic diff and fault detection, pure ----------------------------------------------


def _with_body(index: int, edit: Any) -> tuple[Any, Any]:
    old = load_cassette(SOURCE / "text-basic.yaml")
    interactions = list(old.interactions)
    resp = interactions[index].response
    interactions[index] = replace(interactions[index], response=replace(resp, body=edit(resp.body)))
    return old, replace(old, interactions=tuple(interactions))


def _json_edit(change: Any) -> Any:
    def edit(body: bytes) -> bytes:
        data = json.loads(body)
        change(data)
        return json.dumps(data).encode()

    return edit


@pytest.mark.parametrize(
    ("index", "edit", "expected"),
    [
        (0, _json_edit(lambda d: d.update(id="msg_other")), []),
        (0, _json_edit(lambda d: d["usage"].update(output_tokens=999)), []),
        (
            0,
            _json_edit(lambda d: d["usage"].setdefault("output_tokens_details", {"thinking_tokens": 0})),
            [
                "#0 (non-stream): usage fields appeared: output_tokens_details, output_tokens_details.thinking_tokens"
            ],
        ),
        (
            0,
            _json_edit(lambda d: d["usage"].pop("service_tier")),
            ["#0 (non-stream): usage fields disappeared: service_tier"],
        ),
        (
            0,
            _json_edit(
                lambda d: d["content"].insert(0, {"type": "thinking", "thinking": "", "signature": "x"})
            ),
            ["#0 (non-stream): content blocks [text] → [thinking, text]"],
        ),
        (
            1,
            lambda b: b.replace(b'event: ping\ndata: {"type": "ping"}\n\n', b""),
            [
                "#1 (stream): SSE events [message_start, content_block_start, ping, content_block_delta*, content_block_stop, "
                "message_delta, message_stop] → [message_start, content_block_start, content_block_delta*, "
                "content_block_stop, message_delta, message_stop]"
            ],
        ),
    ],
    ids=[
        "id-ignored",
        "token-count-ignored",
        "usage-field-appeared",
        "usage-field-gone",
        "block-order",
        "sse-events",
    ],
)
def test_semantic_diff(index: int, edit: Any, expected: list[str]) -> None:
    old, new = _with_body(index, edit)
    assert diff_cassettes(old, new) == expected


def test_status_change_is_reported() -> None:
    old = load_cassette(SOURCE / "text-basic.yaml")
    first = old.interactions[0]
    broken = replace(first, response=replace(first.response, status=500))
    lines = diff_cassettes(old, replace(old, interactions=(broken, old.interactions[1])))
    assert lines[0] == "#0 (non-stream): status 200 → 500"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("text-basic", None),
        ("error-400", "interaction #0 answers HTTP 400"),
        ("stream-error-overloaded", "interaction #0 answers HTTP 529"),
    ],
)
def test_fault_reason(name: str, reason: str | None) -> None:
    assert fault_reason(load_cassette(SOURCE / f"{name}.yaml")) == reason


def test_mid_stream_error_is_a_fault() -> None:
    cassette = load_cassette(SOURCE / "stream-error-overloaded.yaml")
    only_stream = replace(cassette, interactions=cassette.interactions[1:])
    assert fault_reason(only_stream) == "interaction #0 ends in a mid-stream `event: error`"
