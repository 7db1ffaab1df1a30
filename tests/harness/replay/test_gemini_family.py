"""harness.replay's Gemini endpoint (`generateContent`, `streamGenerateContent?alt=sse`), driven by the official
`google-genai` SDK: cassettes routed by case marker, fault injection, mid-stream errors, re-chunking."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from google import genai
from google.genai import errors, types

from harness.paths import cassettes_dir
from harness.replay.client import ReplayClient
from harness.replay.server import ReplayServer

MODEL = "gemini-2.5-flash"


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer(cassettes_dir()) as srv:
        yield srv


@pytest.fixture(scope="module")
def rc(server: ReplayServer) -> Iterator[ReplayClient]:
    with ReplayClient(server.url, timeout=5) as client:
        yield client


@pytest.fixture
def client(server: ReplayServer) -> genai.Client:
    options = types.HttpOptions(
        base_url=server.url,
        api_version="v1beta",
        timeout=5000,
        retry_options=types.HttpRetryOptions(attempts=1),
    )
    return genai.Client(api_key="gc-replay-test-key", http_options=options)


def _marker() -> str:
    return f"[gc:test/gemini#{uuid.uuid4().hex[:8]}]"


def _register(rc: ReplayClient, upstream: dict[str, object]) -> str:
    marker = _marker()
    rc.register(marker, "test/gemini", upstream)
    return marker


def test_generate_content_is_served_from_the_cassette(rc: ReplayClient, client: genai.Client) -> None:
    marker = _register(rc, {"cassette": "gemini/text-basic"})
    answer = client.models.generate_content(model=MODEL, contents=f"{marker} What is an API gateway?")
    assert answer.text == "An API gateway is one entry point in front of many services."
    assert answer.candidates and answer.candidates[0].finish_reason == types.FinishReason.STOP
    assert answer.usage_metadata and answer.usage_metadata.total_token_count == 38
    (call,) = rc.calls(marker)
    assert call.path == f"/v1beta/models/{MODEL}:generateContent"
    assert call.json is not None and marker in call.json["contents"][0]["parts"][0]["text"]
    assert call.served is not None and call.served.cassette == "gemini/text-basic"


def test_stream_generate_content_serves_the_stream_interaction(
    rc: ReplayClient, client: genai.Client
) -> None:
    marker = _register(rc, {"cassette": "gemini/text-basic", "rechunk": [7, 3]})
    chunks = list(client.models.generate_content_stream(model=MODEL, contents=f"{marker} hi"))
    assert (
        "".join(c.text or "" for c in chunks)
        == "An API gateway is one entry point in front of many services."
    )
    assert chunks[-1].candidates and chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    (call,) = rc.calls(marker)
    assert call.path.endswith(":streamGenerateContent") and "alt=sse" in call.query


def test_tool_call_parts_reach_the_sdk(rc: ReplayClient, client: genai.Client) -> None:
    marker = _register(rc, {"cassette": "gemini/tool-call"})
    answer = client.models.generate_content(model=MODEL, contents=f"{marker} Weather in Paris?")
    calls = answer.function_calls or []
    assert calls and calls[0].name and isinstance(calls[0].args, dict)


@pytest.mark.e2e
@pytest.mark.parametrize(("status", "code"), [(429, "RESOURCE_EXHAUSTED"), (503, "UNAVAILABLE")])
def test_injected_status_is_a_gemini_error(
    rc: ReplayClient, client: genai.Client, status: int, code: str
) -> None:
    marker = _register(rc, {"fault": {"status": status}})
    with pytest.raises(errors.APIError) as info:
        client.models.generate_content(model=MODEL, contents=f"{marker} hi")
    assert info.value.code == status
    assert info.value.status == code


def test_mid_stream_error_is_a_gemini_error_line(rc: ReplayClient, client: genai.Client) -> None:
    marker = _register(
        rc,
        {
            "cassette": "gemini/text-basic",
            "fault": {"error_after_events": 1, "error": {"code": 503, "message": "The model is overloaded."}},
        },
    )
    seen: list[str] = []
    with pytest.raises(errors.APIError) as info:
        for chunk in client.models.generate_content_stream(model=MODEL, contents=f"{marker} hi"):
            seen.append(chunk.text or "")
    assert seen == ["An API gateway"]  # the first event, then the error
    assert info.value.code == 503
    (call,) = rc.calls(marker)
    assert call.served is not None and b'"status": "UNAVAILABLE"' in call.served.body


def test_an_unmarked_request_is_a_gemini_400(client: genai.Client) -> None:
    with pytest.raises(errors.APIError) as info:
        client.models.generate_content(model=MODEL, contents="no marker here")
    assert info.value.code == 400 and info.value.status == "INVALID_ARGUMENT"
    assert "case marker" in (info.value.message or "")
