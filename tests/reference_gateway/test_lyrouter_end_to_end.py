"""Profile `lyrouter` end to end: the gateway on loopback in front of one fake upstream that speaks both
Anthropic Messages and OpenAI-compatible Chat Completions, driven by the unchanged `openai` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
import pytest

from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import LYROUTER
from reference_gateway.upstream.client import UpstreamSettings
from tests.reference_gateway.conftest import (
    CLIENT_KEY,
    UPSTREAM_KEY,
    ServerThread,
    answer_lifespan,
    message,
    read_request,
    sse,
    text_events,
)

USER = [{"role": "user", "content": "hi"}]


def completion(text: str = "Hello from OpenAI.") -> dict[str, Any]:
    return {
        "id": "chatcmpl-upstream1",
        "object": "chat.completion",
        "created": 1795953600,
        "model": "gpt-5.5-2026-09-01",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    }


def openai_sse(*, done: bool = True) -> bytes:
    base = {"id": "chatcmpl-upstream1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5.5"}
    chunks = [
        {
            **base,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
        },
        {**base, "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}},
    ]
    text = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return text + (b"data: [DONE]\n\n" if done else b"")


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    drop: bool = False  # send the headers, then close without a body


@dataclass
class Call:
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


@dataclass
class FakeUpstream:
    """Answers from a script (one Answer per call, default: a plain answer for the path's protocol)."""

    script: list[Answer] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    def default(self, path: str, stream: bool) -> Answer:
        if path.endswith("/messages"):
            if stream:
                return Answer(body=b"".join(sse(e) for e in text_events()), content_type="text/event-stream")
            return Answer(body=json.dumps(message()).encode())
        if stream:
            return Answer(body=openai_sse(), content_type="text/event-stream")
        return Answer(body=json.dumps(completion()).encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        raw, headers = await read_request(scope, receive)
        self.calls.append(Call(scope["path"], headers, raw))
        stream = bool(json.loads(raw).get("stream")) if raw else False
        answer = self.script.pop(0) if self.script else self.default(scope["path"], stream)
        await send(
            {
                "type": "http.response.start",
                "status": answer.status,
                "headers": [(b"content-type", answer.content_type.encode())],
            }
        )
        if answer.drop:
            raise ConnectionAbortedError("scripted drop")
        await send({"type": "http.response.body", "body": answer.body})


@pytest.fixture(scope="module")
def upstream_server() -> Iterator[tuple[FakeUpstream, ServerThread]]:
    fake = FakeUpstream()
    with ServerThread(fake) as server:
        yield fake, server


def settings(url: str, default_model: str | None = "claude-sonnet-5-5") -> GatewaySettings:
    return GatewaySettings(
        profile=LYROUTER,
        catalog=load_catalog(shipped=LYROUTER.catalog),
        upstream=UpstreamSettings(
            base_url=url, api_key=UPSTREAM_KEY, request_timeout=5, connect_timeout=2, stream_idle_timeout=5
        ),
        keys=KeyRing.of([CLIENT_KEY]),
        default_model=default_model,
    )


@pytest.fixture(scope="module")
def gateway_url(upstream_server: tuple[FakeUpstream, ServerThread]) -> Iterator[str]:
    with ServerThread(
        create_app(settings(upstream_server[1].url), Hooks(clock=lambda: 1793318400.0))
    ) as server:
        yield server.url


@pytest.fixture
def fake(upstream_server: tuple[FakeUpstream, ServerThread]) -> FakeUpstream:
    upstream_server[0].script.clear()
    upstream_server[0].calls.clear()
    return upstream_server[0]


@pytest.fixture
def client(gateway_url: str, fake: FakeUpstream) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{gateway_url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=10) as c:
        yield c


def test_openai_channel_passes_answer_through(client: openai.OpenAI, fake: FakeUpstream) -> None:
    out = client.chat.completions.create(
        model="qwen3-max",
        messages=[{"role": "user", "content": "hi"}],
        extra_body={
            "enable_thinking": True,
            "reasoning_effort": "low",
            "custom": {"b": 1, "a": 12345678901234567},
        },
    )
    assert (out.id, out.model) == ("chatcmpl-upstream1", "gpt-5.5-2026-09-01")
    call = fake.calls[-1]
    assert call.path == "/compatible-mode/v1/chat/completions"
    assert call.headers["authorization"] == f"Bearer {UPSTREAM_KEY}" and CLIENT_KEY not in json.dumps(
        call.headers
    )
    assert call.body["model"] == "qwen3-max" and call.body["enable_thinking"] is True
    assert "reasoning_effort" not in call.body
    assert b'"custom":{"a":1.2345678901235e+16,"b":1}' in call.raw
    assert list(call.body) == sorted(call.body)


def test_openai_channel_stream_forces_usage(client: openai.OpenAI, fake: FakeUpstream) -> None:
    chunks = list(
        client.chat.completions.create(
            model="gpt-5.5", messages=USER, stream=True, stream_options={"include_usage": False}
        )
    )
    assert fake.calls[-1].body["stream_options"] == {"include_usage": True}
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 10
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hi"


def test_openai_stream_cut_short_is_stream_interrupted(gateway_url: str, fake: FakeUpstream) -> None:
    fake.script.append(Answer(body=openai_sse(done=False), content_type="text/event-stream"))
    body = {"model": "kimi-k2", "messages": USER, "stream": True}
    response = httpx.post(f"{gateway_url}/v1/chat/completions", json=body, headers={"x-api-key": CLIENT_KEY})
    events = [line[6:] for line in response.text.split("\n") if line.startswith("data: ")]
    assert json.loads(events[-1])["error"]["code"] == "stream_interrupted"
    assert "[DONE]" not in events


def test_anthropic_channel_answer_and_default_model(client: openai.OpenAI, fake: FakeUpstream) -> None:
    out = client.chat.completions.create(model="", messages=USER)  # "" → the workspace default
    assert (out.id, out.model) == ("msg_1", "claude-sonnet-5-5")
    call = fake.calls[-1]
    assert call.path == "/v1/messages" and call.headers["x-api-key"] == UPSTREAM_KEY
    assert call.body["max_tokens"] == 4096
    assert out.usage is not None and out.usage.model_extra == {
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_fallback_to_second_channel_before_first_byte(
    client: openai.OpenAI, fake: FakeUpstream, stream: bool
) -> None:
    overloaded = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    fake.script.append(Answer(status=529, body=overloaded.encode()))
    if stream:
        text = "".join(
            c.choices[0].delta.content or ""
            for c in client.chat.completions.create(model="claude-haiku-4-5", messages=USER, stream=True)
            if c.choices
        )
    else:
        text = (
            client.chat.completions.create(model="claude-haiku-4-5", messages=USER).choices[0].message.content
        )
    assert text == "Hello there!"
    assert [c.path for c in fake.calls] == ["/v1/messages", "/v1/messages"]


def test_no_fallback_for_a_client_error_which_is_forwarded(gateway_url: str, fake: FakeUpstream) -> None:
    error = b'{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}'
    fake.script.append(Answer(status=400, body=error))
    body = {"model": "claude-haiku-4-5", "messages": USER}
    response = httpx.post(f"{gateway_url}/v1/chat/completions", json=body, headers={"x-api-key": CLIENT_KEY})
    assert (response.status_code, response.content) == (400, error)
    assert len(fake.calls) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_connection_failure_is_an_html_500(gateway_url: str, fake: FakeUpstream, stream: bool) -> None:
    fake.script.append(Answer(drop=True, content_type="text/event-stream" if stream else "application/json"))
    body = {"model": "claude-sonnet-5-5", "messages": USER, "stream": stream}
    response = httpx.post(f"{gateway_url}/v1/chat/completions", json=body, headers={"x-api-key": CLIENT_KEY})
    assert response.status_code == 500 and response.headers["content-type"].startswith("text/html")
    assert response.text.lstrip().startswith("<html>")


REQUEST_ERRORS: Sequence[tuple[Mapping[str, str], bytes, int, str]] = [
    ({"content-type": "application/x-www-form-urlencoded"}, b"{}", 400, "unsupported content-type: "),
    ({}, b'{"model": "x", ', 400, '{"message": "could not get parse JSON request body: '),
    ({}, b'{"model": "gemini-3-pro", "messages": []}', 403, '"code":"model_not_available"'),
    ({}, b'{"model": "gpt-image-2", "messages": []}', 400, '"code":"unsupported_model_api"'),
    ({}, b'{"model": "@vmodel/does-not-exist", "messages": []}', 503, '"code":"no_route_candidate"'),
    ({"authorization": "bearer " + CLIENT_KEY}, b"{}", 401, '"code":"invalid_api_key"'),
]


@pytest.mark.parametrize(
    ("headers", "raw", "status", "start"),
    REQUEST_ERRORS,
    ids=["ctype", "json", "403", "api", "503", "bearer"],
)
def test_request_errors(
    gateway_url: str, fake: FakeUpstream, headers: Mapping[str, str], raw: bytes, status: int, start: str
) -> None:
    sent = {"x-api-key": CLIENT_KEY, **headers}
    response = httpx.post(f"{gateway_url}/v1/chat/completions", content=raw, headers=sent)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    assert start in response.text
    assert fake.calls == []


def test_without_default_model_missing_model_and_invalid_json(
    upstream_server: tuple[FakeUpstream, ServerThread],
) -> None:
    app = create_app(settings(upstream_server[1].url, default_model=None))
    with ServerThread(app) as server:
        url, headers = f"{server.url}/v1/chat/completions", {"x-api-key": CLIENT_KEY}
        missing = httpx.post(url, json={"messages": USER}, headers=headers).json()["error"]
        broken = httpx.post(url, content=b"[1, 2]", headers=headers).json()["error"]
    assert (missing["code"], missing["message"]) == ("missing_model", "you must provide a model parameter")
    assert (broken["code"], broken["message"]) == ("invalid_json", "request body must be a JSON object")
