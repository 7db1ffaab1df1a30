"""harness.replay: the replay upstream, driven by the official SDKs, plus its control API and file server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from harness.cli import main as cli_main
from harness.errors import ReplayConfigError, ReplayError
from harness.replay.client import ReplayClient
from harness.replay.fixtures import BIG_FILE_BYTES
from harness.replay.plan import PlannedAnswer, plan_answer, split_events
from harness.replay.server import ReplayServer
from harness.replay.state import ReplayState, normalize_marker

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cassettes"
TEXT = "Héllo wörld — 日本語 ✓ 🎉"
FAKE_ANT_KEY = "sk-" + "ant-" + "api03-" + "Zx9" * 12  # built here so no secret-shaped literal is stored


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer(FIXTURES) as srv:
        yield srv


@pytest.fixture(scope="module")
def _rc(server: ReplayServer) -> Iterator[ReplayClient]:
    with ReplayClient(server.url, timeout=5) as client:
        yield client


@pytest.fixture
def rc(_rc: ReplayClient) -> ReplayClient:
    _rc.forget()
    _rc.clear_diagnostics()
    return _rc


# One pooled transport for every SDK client: building a client loads the CA bundle (~0.2 s here).
@pytest.fixture(scope="module")
def wire() -> Iterator[httpx2.Client]:
    with httpx2.Client(verify=False, timeout=5) as client:
        yield client


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(verify=False, timeout=5) as client:
        yield client


@pytest.fixture
def sdk(server: ReplayServer, wire: httpx2.Client) -> anthropic.Anthropic:
    # Not closed per test: closing would close the shared `wire`.
    return anthropic.Anthropic(
        base_url=server.url, api_key="test-key", max_retries=0, timeout=5, http_client=wire
    )


def new_marker(rule: str = "test/replay") -> str:
    return f"[gc:{rule}#{uuid.uuid4().hex[:12]}]"


def user(marker: str, text: str = "say hello") -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"{marker} {text}"}]


def create(sdk: anthropic.Anthropic, marker: str, **kw: Any) -> Any:
    return sdk.messages.create(model="claude-sonnet-5-5", max_tokens=64, messages=user(marker), **kw)


def stream_text(sdk: anthropic.Anthropic, marker: str) -> str:
    with sdk.messages.stream(model="claude-sonnet-5-5", max_tokens=64, messages=user(marker)) as s:
        return s.get_final_text()


# --------------------------------------------------------------------------------------------- serving


def test_json_answer_and_the_call_is_recorded(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/json", {"cassette": "anthropic/text"})
    msg = create(sdk, m)
    assert msg.content[0].text == TEXT
    assert msg._request_id == "req_fixture0001"
    (call,) = rc.calls(m)
    assert call.method == "POST" and call.path == "/v1/messages"
    assert call.headers["authorization"] == "Bearer test-key"
    assert call.headers["anthropic-version"]
    assert call.json["messages"][0]["content"].startswith(m)
    assert call.served is not None
    assert (call.served.status, call.served.cassette, call.served.interaction) == (200, "anthropic/text", 0)
    assert json.loads(call.served.body)["content"][0]["text"] == TEXT
    assert call.served.headers["request-id"] == "req_fixture0001"
    assert not {"date", "server", "transfer-encoding"} & set(call.served.headers)


@pytest.mark.parametrize("how", ["messages.stream", "create-stream-true"], ids=lambda v: v)
def test_stream_answer(rc: ReplayClient, sdk: anthropic.Anthropic, how: str) -> None:
    m = new_marker()
    rc.register(m, "test/stream", {"cassette": "anthropic/text"})
    if how == "messages.stream":
        assert stream_text(sdk, m) == TEXT
    else:
        events = list(create(sdk, m, stream=True))
        text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
        assert text == TEXT
        assert events[-1].type == "message_stop"
    (call,) = rc.calls(m)
    assert call.json["stream"] is True
    assert call.served is not None and call.served.interaction == 1
    assert call.served.headers["content-type"].startswith("text/event-stream")
    assert call.served.body.count(b"\n\n") == 10


def test_tool_use_stream(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/tool", {"cassette": "anthropic/tool-use", "rechunk": [3, 1, 4]})
    with sdk.messages.stream(model="m", max_tokens=64, messages=user(m)) as s:
        final = s.get_final_message()
    tool = final.content[1]
    assert (tool.type, tool.name, tool.input) == ("tool_use", "get_weather", {"location": "Paris"})
    assert final.stop_reason == "tool_use"


def test_x_api_key_is_accepted_and_recorded(
    server: ReplayServer, rc: ReplayClient, wire: httpx2.Client
) -> None:
    m = new_marker()
    rc.register(m, "test/x-api-key", {"cassette": "anthropic/text"})
    client = anthropic.Anthropic(
        base_url=server.url,
        api_key=None,
        default_headers={"x-api-key": "any-key"},
        max_retries=0,
        http_client=wire,
    )
    assert create(client, m).content[0].text == TEXT
    (call,) = rc.calls(m)
    assert call.headers["x-api-key"] == "any-key" and "authorization" not in call.headers


def test_any_path_prefix_and_marker_anywhere(
    server: ReplayServer, rc: ReplayClient, http: httpx.Client
) -> None:
    m = new_marker()
    rc.register(m, "test/prefix", {"cassette": "anthropic/text"})
    # A gateway may move the marker (here into `system`) and JSON-escape slashes.
    body = json.dumps(
        {
            "model": "m",
            "max_tokens": 16,
            "system": f"ctx {m}",
            "messages": [{"role": "user", "content": "hi"}],
        }
    )
    body = body.replace("/", "\\/")
    r = http.post(
        f"{server.url}/proxy/anthropic/v1/messages",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 200 and r.json()["content"][0]["text"] == TEXT
    assert rc.calls(m)[0].path == "/proxy/anthropic/v1/messages"


@pytest.mark.parametrize("rechunk", ["bytewise", [1, 2], [5], [7, 13, 1], [100000]], ids=lambda v: str(v))
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_rechunked_bodies_still_decode(
    rc: ReplayClient, sdk: anthropic.Anthropic, rechunk: Any, stream: bool
) -> None:
    m = new_marker()
    rc.register(m, "test/rechunk", {"cassette": "anthropic/text", "rechunk": rechunk})
    text = stream_text(sdk, m) if stream else create(sdk, m).content[0].text
    assert text == TEXT
    served = rc.calls(m)[0].served
    assert served is not None and served.fault is None


def test_rechunk_cuts_inside_utf8_characters() -> None:
    body = f"event: x\ndata: {TEXT}\n\n".encode()
    answer = PlannedAnswer(status=200, headers=(("content-type", "text/event-stream"),), body=body, sse=True)
    plan = plan_answer(answer, {"rechunk": [3]}, "anthropic.messages")
    assert plan.body == body
    assert [len(c) for _, c in plan.chunks][:-1] == [3] * (len(plan.chunks) - 1)

    def decodes(b: bytes) -> bool:
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    assert not all(decodes(c) for _, c in plan.chunks)  # some piece ends mid-character


@pytest.mark.parametrize(
    ("fault", "exc_class", "status", "etype"),
    [
        (
            {"status": 529, "headers": {"retry-after": "7"}},
            anthropic.OverloadedError,
            529,
            "overloaded_error",
        ),
        (
            {
                "status": 429,
                "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
            },
            anthropic.RateLimitError,
            429,
            "rate_limit_error",
        ),
        ({"status": 401}, anthropic.AuthenticationError, 401, "authentication_error"),
        ({"status": 400, "body": "plain text, not JSON"}, anthropic.BadRequestError, 400, None),
        (
            {"status": 503, "body": '{"type":"error","error":{"type":"api_error","message":"x"}}'},
            anthropic.InternalServerError,
            503,
            "api_error",
        ),
    ],
    ids=["529-retry-after", "429-json-body", "401-default-body", "400-string-body", "503-string-json"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_status_faults(rc, sdk, fault, exc_class, status, etype, stream) -> None:
    m = new_marker()
    rc.register(m, "test/status", {"cassette": "anthropic/text", "fault": fault})
    with pytest.raises(exc_class) as info:
        stream_text(sdk, m) if stream else create(sdk, m)
    assert info.value.status_code == status
    assert info.value.type == etype
    for name, value in fault.get("headers", {}).items():
        assert info.value.response.headers[name] == value
    served = rc.calls(m)[0].served
    assert served is not None and served.status == status and served.fault == fault


def test_recorded_529_keeps_retry_after_and_request_id(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/overloaded", {"cassette": "anthropic/overloaded"})
    with pytest.raises(anthropic.OverloadedError) as info:
        create(sdk, m)
    assert info.value.response.headers["retry-after"] == "1"
    assert info.value.request_id == "req_fixture0002"


def test_fault_without_cassette(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/no-cassette", {"fault": {"status": 529}})
    with pytest.raises(anthropic.OverloadedError):
        create(sdk, m)


@pytest.mark.parametrize(
    ("fault", "etype", "deltas"),
    [
        ({"error_after_events": 4}, "overloaded_error", ["Héllo"]),
        ({"error_after_events": 0, "error": {"type": "api_error", "message": "boom"}}, "api_error", []),
    ],
    ids=["after-4-default", "immediately-custom"],
)
def test_error_after_events(rc, sdk, fault, etype, deltas) -> None:
    m = new_marker()
    rc.register(m, "test/mid-stream", {"cassette": "anthropic/text", "fault": fault})
    seen: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info:
        for event in create(sdk, m, stream=True):
            if event.type == "content_block_delta":
                seen.append(event.delta.text)
    assert type(info.value) is anthropic.APIStatusError  # a bare APIStatusError after HTTP 200 (§1.7)
    assert info.value.status_code == 200 and info.value.type == etype
    assert seen == deltas
    served = rc.calls(m)[0].served
    assert served is not None and served.body.endswith(b"\n\n")
    assert served.body.split(b"\n\n")[-2].startswith(b"event: error\ndata: ")
    assert served.fault is not None and served.fault["error_after_events"] == fault["error_after_events"]


def test_drop_after_bytes_breaks_the_stream(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/drop", {"cassette": "anthropic/text", "fault": {"drop_after_bytes": 420}})
    # anthropic 2.16 lets the transport's error through; 2.17 (what `pip install -e '.[test]'` resolves on a fresh
    # machine, the SDK being unpinned there) wraps it as APIConnectionError with the transport's message.
    with pytest.raises(
        (httpx2.RemoteProtocolError, anthropic.APIConnectionError), match="incomplete chunked read"
    ):
        stream_text(sdk, m)
    served = rc.calls(m)[0].served
    assert served is not None and len(served.body) == 420


def test_drop_after_bytes_breaks_a_json_body(
    server: ReplayServer, rc: ReplayClient, http: httpx.Client
) -> None:
    m = new_marker()
    rc.register(m, "test/drop-json", {"cassette": "anthropic/text", "fault": {"drop_after_bytes": 50}})
    body = {"model": "m", "max_tokens": 5, "messages": user(m)}
    with pytest.raises(httpx.RemoteProtocolError):
        http.post(f"{server.url}/v1/messages", json=body)


def test_first_byte_delay_times_the_client_out(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/slow", {"cassette": "anthropic/text", "fault": {"first_byte_delay": 2.0}})
    with pytest.raises(anthropic.APITimeoutError):
        create(sdk.with_options(timeout=0.2), m)
    (call,) = rc.calls(m)  # recorded as soon as it arrived
    assert call.served is not None and call.served.fault == {"first_byte_delay": 2.0}


def test_pacing_and_pause_complete_the_stream(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    upstream = {
        "cassette": "anthropic/text",
        "pacing": 0.005,
        "fault": {"pause_after_events": {"events": 2, "seconds": 0.05}},
    }
    rc.register(m, "test/pacing", upstream)
    assert stream_text(sdk, m) == TEXT
    served = rc.calls(m)[0].served
    assert served is not None and served.fault == {"pause_after_events": {"events": 2, "seconds": 0.05}}


def test_plan_delays_sit_at_event_boundaries() -> None:
    body = b"".join(f"event: e{i}\ndata: {{}}\n\n".encode() for i in range(4))
    answer = PlannedAnswer(status=200, headers=(("content-type", "text/event-stream"),), body=body, sse=True)
    plan = plan_answer(
        answer, {"pacing": 0.5, "fault": {"pause_after_events": {"events": 2, "seconds": 3}}}, None
    )
    assert [d for d, _ in plan.chunks] == [0.0, 0.5, 3.5, 0.5]
    assert [c for _, c in plan.chunks] == split_events(body)
    recut = plan_answer(answer, {"pacing": 0.5, "rechunk": "bytewise"}, None)
    assert sum(d for d, _ in recut.chunks) == 1.5 and all(len(c) == 1 for _, c in recut.chunks)


def test_split_events_keeps_boundaries() -> None:
    assert split_events(b"a\n\nb\r\n\r\nc") == [b"a\n\n", b"b\r\n\r\n", b"c"]


def test_interactions_are_consumed_in_order_then_the_last_repeats(
    rc: ReplayClient, sdk: anthropic.Anthropic
) -> None:
    m = new_marker()
    rc.register(m, "test/retry", {"cassette": "anthropic/retry-then-text"})
    with pytest.raises(anthropic.OverloadedError):
        create(sdk, m)
    assert create(sdk, m).content[0].text == TEXT
    assert create(sdk, m).content[0].text == TEXT
    assert [c.served.interaction for c in rc.calls(m) if c.served] == [0, 1, 1]


def test_calls_are_recorded_per_marker_under_concurrency(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    markers = [new_marker(f"test/conc{i}") for i in range(8)]
    for m in markers:
        rc.register(m, "test/conc", {"cassette": "anthropic/text", "pacing": 0.001})
    errors: list[BaseException] = []

    def worker(m: str) -> None:
        try:
            for _ in range(3):
                assert stream_text(sdk, m) == TEXT
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(m,)) for m in markers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == []
    for m in markers:
        calls = rc.calls(m)
        assert len(calls) == 3
        assert all(m in c.body.decode() for c in calls)


# --------------------------------------------------------------------------------------------- errors, diagnostics


def test_unmarked_request_gets_provider_error_and_diagnostic(
    rc: ReplayClient, sdk: anthropic.Anthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError) as info:
        sdk.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": f"no marker {FAKE_ANT_KEY}"}]
        )
    assert info.value.type == "invalid_request_error"
    assert "gateway-conformance replay" in info.value.api_message
    (diag,) = rc.diagnostics()
    assert diag["kind"] == "unmarked" and diag["path"] == "/v1/messages"
    assert "no marker" in diag["excerpt"] and FAKE_ANT_KEY not in diag["excerpt"]
    assert "test-key" not in json.dumps(diag)  # no request headers in diagnostics


def test_unknown_marker(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    with pytest.raises(anthropic.BadRequestError, match="not registered"):
        create(sdk, m)
    (diag,) = rc.diagnostics()
    assert diag["kind"] == "unknown-marker" and diag["markers"] == [m]


def test_no_matching_interaction(rc: ReplayClient, sdk: anthropic.Anthropic) -> None:
    m = new_marker()
    rc.register(m, "test/no-match", {"cassette": "openai/chat"})
    with pytest.raises(anthropic.BadRequestError, match="no interaction matches"):
        create(sdk, m)
    (diag,) = rc.diagnostics()
    assert diag["kind"] == "no-match" and "closest: #0 (endpoint" in diag["message"]
    assert diag["rule"] == "test/no-match"
    assert len(rc.calls(m)) == 1


@pytest.mark.parametrize("upstream", [None, {}, {"pacing": 0.1}], ids=["null", "empty", "no-cassette"])
def test_case_without_cassette_answers_with_an_error(
    rc: ReplayClient, sdk: anthropic.Anthropic, upstream: Any
) -> None:
    m = new_marker()
    rc.register(m, "test/refuse", upstream)
    with pytest.raises(
        anthropic.BadRequestError, match="no upstream answer is scripted for rule test/refuse"
    ):
        create(sdk, m)
    assert len(rc.calls(m)) == 1


def test_openai_channel(server: ReplayServer, rc: ReplayClient, wire: httpx2.Client) -> None:
    m = new_marker()
    rc.register(m, "test/openai", {"cassette": "openai/chat", "rechunk": "bytewise"})
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="test-key", max_retries=0, http_client=wire)
    msgs: Any = [{"role": "user", "content": f"{m} hi"}]
    done = client.chat.completions.create(model="gpt-fixture", messages=msgs)
    assert done.choices[0].message.content == "Hi there"
    chunks = list(client.chat.completions.create(model="gpt-fixture", messages=msgs, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Hi there"
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="gpt-fixture", messages=[{"role": "user", "content": "unmarked"}]
        )
    assert info.value.body["type"] == "invalid_request_error"  # OpenAI envelope: e.body is the inner error
    assert [c.served.interaction for c in rc.calls(m) if c.served] == [0, 1]


def test_openai_channel_mid_stream_error(server: ReplayServer, rc: ReplayClient, wire: httpx2.Client) -> None:
    m = new_marker()
    rc.register(m, "test/openai-err", {"cassette": "openai/chat", "fault": {"error_after_events": 1}})
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0, http_client=wire)
    with pytest.raises(openai.APIError, match="Overloaded"):
        list(
            client.chat.completions.create(model="g", messages=[{"role": "user", "content": m}], stream=True)
        )


def test_unknown_path(server: ReplayServer, rc: ReplayClient, http: httpx.Client) -> None:
    r = http.get(f"{server.url}/v1/embeddings")
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found_error"
    assert rc.diagnostics()[0]["kind"] == "unknown-path"


# --------------------------------------------------------------------------------------------- control API


def test_control_api(server: ReplayServer, rc: ReplayClient, http: httpx.Client) -> None:
    assert rc.health()
    m = new_marker()
    rc.register(m, "test/a", {"cassette": "anthropic/text"})
    assert rc.calls(m) == ()
    assert rc.calls(m.strip("[]")) == ()  # markers with or without brackets
    rc.register(m, "test/b", None)  # re-registering replaces the case
    assert http.get(f"{server.url}/__gc/calls", params={"marker": m}).json()["rule"] == "test/b"
    rc.forget(m)
    with pytest.raises(ReplayError) as info:
        rc.calls(m)
    assert info.value.status == 404
    r = http.post(f"{server.url}/__gc/cases", json={"marker": new_marker(), "rule": "r", "upstream": None})
    assert r.status_code == 201


@pytest.mark.parametrize(
    ("marker", "upstream", "problem"),
    [
        ("not-a-marker", None, "not a case marker"),
        ("[gc:x#abcdef]", {"cassette": "anthropic/does-not-exist"}, "no such cassette"),
        ("[gc:x#abcdef]", {"cassette": "../../etc/passwd"}, "leaves"),
        ("[gc:x#abcdef]", {"cassete": "anthropic/text"}, "unknown upstream keys: cassete"),
        ("[gc:x#abcdef]", {"fault": {"status": 999}}, "fault.status"),
        ("[gc:x#abcdef]", {"fault": {"drop_after": 1}}, "unknown fault keys"),
        ("[gc:x#abcdef]", {"rechunk": [0]}, "rechunk"),
        ("[gc:x#abcdef]", [], "upstream must be an object"),
    ],
    ids=[
        "bad-marker",
        "missing-cassette",
        "traversal",
        "typo-key",
        "bad-status",
        "bad-fault-key",
        "bad-rechunk",
        "list",
    ],
)
def test_register_refusals(rc: ReplayClient, marker: str, upstream: Any, problem: str) -> None:
    with pytest.raises(ReplayError, match=problem) as info:
        rc.register(marker, "test/bad", upstream)
    assert info.value.status == 400


def test_invalid_cassette_is_a_400(tmp_path: Path) -> None:
    (tmp_path / "anthropic").mkdir()
    text = (FIXTURES / "anthropic" / "text.yaml").read_text()
    (tmp_path / "anthropic" / "leaky.yaml").write_text(text.replace("<REDACTED>", FAKE_ANT_KEY))
    (tmp_path / "anthropic" / "old.yaml").write_text(text.replace("version: 1", "version: 0"))
    with ReplayServer(tmp_path) as srv, ReplayClient(srv.url) as client:
        with pytest.raises(ReplayError, match="header 'x-api-key' holds a real-looking secret"):
            client.register("[gc:x#abcdef]", "r", {"cassette": "anthropic/leaky"})
        with pytest.raises(ReplayError, match="unsupported cassette version 0"):
            client.register("[gc:x#abcdef]", "r", {"cassette": "anthropic/old"})
        assert FAKE_ANT_KEY not in str(client.diagnostics())


def test_binary_request_bodies_round_trip(server: ReplayServer, rc: ReplayClient, http: httpx.Client) -> None:
    m = new_marker()
    rc.register(m, "test/binary", None)
    body = m.encode() + b"\xff\xfe\x00binary"
    http.post(f"{server.url}/v1/messages", content=body)
    raw = http.get(f"{server.url}/__gc/calls", params={"marker": m}).json()["calls"][0]
    assert raw["body_encoding"] == "base64"
    (call,) = rc.calls(m)
    assert call.body == body and call.json is None


def test_client_errors_are_replay_errors() -> None:
    with ReplayClient("http://127.0.0.1:9", timeout=0.5) as client:
        assert client.health() is False
        with pytest.raises(ReplayError, match="unreachable") as info:
            client.calls("[gc:x#abcdef]")
        assert isinstance(info.value.__cause__, httpx.HTTPError)


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ("[gc:a/b#abcdef]", "[gc:a/b#abcdef]"),
        ("gc:a/b#abcdef", "[gc:a/b#abcdef]"),
        ("a/b#abcdef", "[gc:a/b#abcdef]"),
    ],
    ids=["bracketed", "no-brackets", "bare"],
)
def test_normalize_marker(given: str, key: str) -> None:
    assert normalize_marker(given) == key


def test_normalize_marker_refuses_short_nonce() -> None:
    with pytest.raises(ReplayConfigError):
        normalize_marker("[gc:a#4f2a]")


def test_state_finds_markers_after_reencoding() -> None:
    state = ReplayState(FIXTURES)
    state.register("[gc:a/b#abcdef]", "a/b", None)
    case, _ = state.find_case(b'{"system":"\\u005bgc:a\\/b#abcdef\\u005d"}')
    assert case is not None and case.rule == "a/b"


# --------------------------------------------------------------------------------------------- file server


@pytest.mark.parametrize(
    ("name", "status", "ctype", "prefix"),
    [
        ("tiny.png", 200, "image/png", b"\x89PNG\r\n\x1a\n"),
        ("tiny.jpg", 200, "image/jpeg", b"\xff\xd8\xff"),
        ("tiny.gif", 200, "image/gif", b"GIF89a"),
        ("tiny.webp", 200, "image/webp", b"RIFF"),
        ("png-as-text.txt", 200, "text/plain", b"\x89PNG"),
        ("not-an-image.png", 200, "image/png", b"This is plain text"),
        ("missing.png", 404, "text/plain", b"no fixture"),
        ("redirect/3/tiny.gif", 200, "image/gif", b"GIF89a"),
        ("redirect/0/tiny.png", 200, "image/png", b"\x89PNG"),
        ("slow.png?delay=0.01", 200, "image/png", b"\x89PNG"),
    ],
    ids=lambda v: v if isinstance(v, str) and "/" not in v[:6] else None,
)
def test_file_server(
    server: ReplayServer, name: str, status: int, ctype: str, prefix: bytes, http: httpx.Client
) -> None:
    r = http.get(f"{server.images_url}/{name}", follow_redirects=True)
    assert r.status_code == status
    assert r.headers["content-type"].startswith(ctype)
    assert r.content.startswith(prefix)
    if name.startswith("redirect/3"):
        assert [h.status_code for h in r.history] == [302, 302, 302]


def test_webp_and_png_are_well_formed(server: ReplayServer, http: httpx.Client) -> None:
    webp = http.get(f"{server.images_url}/tiny.webp").content
    assert webp[8:12] == b"WEBP" and int.from_bytes(webp[4:8], "little") == len(webp) - 8
    png = http.get(f"{server.images_url}/tiny.png").content
    assert png.endswith(b"IEND\xaeB`\x82")


def test_redirect_to_any_url(server: ReplayServer, rc: ReplayClient, http: httpx.Client) -> None:
    r = http.get(
        f"{server.images_url}/redirect-to", params={"url": "http://169.254.169.254/latest/meta-data/"}
    )
    assert r.status_code == 302 and r.headers["location"] == "http://169.254.169.254/latest/meta-data/"
    assert [f["path"] for f in rc.fetches()] == ["/__gc/files/redirect-to"]


def test_big_png_is_over_ten_megabytes(server: ReplayServer, http: httpx.Client) -> None:
    with http.stream("GET", f"{server.images_url}/big.png") as r:
        assert int(r.headers["content-length"]) == BIG_FILE_BYTES == 10 * 1024 * 1024 + 1
        data = r.read()
    assert len(data) == BIG_FILE_BYTES and data.startswith(b"\x89PNG\r\n\x1a\n")


def test_slow_png_times_a_client_out(server: ReplayServer, http: httpx.Client) -> None:
    with pytest.raises(httpx.ReadTimeout):
        http.get(f"{server.images_url}/slow.png", timeout=0.1)


# --------------------------------------------------------------------------------------------- lifecycle, CLI


def test_server_stops_cleanly(tmp_path: Path, http: httpx.Client) -> None:
    srv = ReplayServer(tmp_path).start()
    url = srv.url
    assert http.get(f"{url}/__gc/health").status_code == 200
    srv.stop()
    with pytest.raises(httpx.ConnectError):
        http.get(f"{url}/__gc/health", timeout=0.5)
    with pytest.raises(RuntimeError):
        _ = srv.url
    srv.stop()  # idempotent


def test_serve_upstream_refuses_non_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["serve-upstream", "--host", "0.0.0.0", "--port", "0"]) == 3  # a configuration error
    assert "not a loopback address" in capsys.readouterr().err


def test_serve_upstream_help_explains_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["serve-upstream", "--help"]) == 0
    assert "--allow-non-loopback" in capsys.readouterr().out


@pytest.mark.e2e
def test_serve_upstream_runs_until_ctrl_c(http: httpx.Client) -> None:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve-upstream", "--port", "0", "--cassettes", str(FIXTURES)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.split(" listening on ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        rest = [proc.stdout.readline() for _ in range(4)]
        assert any("Anthropic base URL" in line for line in rest)
        assert http.get(f"{url}/__gc/health", timeout=2).status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_sized_png_has_the_asked_size(server: ReplayServer, http: httpx.Client) -> None:
    r = http.get(f"{server.images_url}/sized.png", params={"bytes": "100000"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert len(r.content) == 100000 and r.content.startswith(b"\x89PNG\r\n\x1a\nIHDR"[:8])
    for bad in ("", "x", "3", str(BIG_FILE_BYTES + 1)):
        assert http.get(f"{server.images_url}/sized.png", params={"bytes": bad}).status_code == 400
