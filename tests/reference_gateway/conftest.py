"""Fixtures for the reference gateway: a scripted fake Anthropic upstream and the gateway, both served by uvicorn
on 127.0.0.1 (free ports) in background threads that stop on their own."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
import uvicorn

from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import EZAT
from reference_gateway.upstream.client import UpstreamSettings
from reference_gateway.upstream.images import AllowList

CLIENT_KEY = "sk-client-test"
UPSTREAM_KEY = "sk-ant-upstream-test"


class ServerThread:
    """uvicorn serving `app` on 127.0.0.1:0 in a daemon thread."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(5)
        self.sock.close()


# ------------------------------------------------------------------------------------------- fake upstream


def sse(event: Mapping[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def text_events(
    text: str = "Hello there!",
    *,
    stop_reason: str = "end_turn",
    usage: Mapping[str, Any] | None = None,
    final_usage: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)] or [""]
    return [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-5-5",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": dict(usage or {"input_tokens": 11, "output_tokens": 1}),
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": dict(final_usage or {"output_tokens": 6}),
        },
        {"type": "message_stop"},
    ]


def message(
    text: str | None = "Hello there!",
    *,
    tool_uses: Sequence[Mapping[str, Any]] = (),
    stop_reason: str = "end_turn",
    usage: Mapping[str, Any] | None = None,
    thinking: str | None = None,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
    if text is not None:
        content.append({"type": "text", "text": text})
    content.extend({"type": "tool_use", **t} for t in tool_uses)
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage or {"input_tokens": 11, "output_tokens": 6}),
    }


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON for non-streams
    events: Sequence[Mapping[str, Any]] | None = None  # SSE events (streams)
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before answering
    gap: float = 0.0  # between events
    drop_after: int | None = None  # close the connection after this many events
    raw: bytes | None = None  # a raw body (for malformed answers)


@dataclass
class Received:
    body: dict[str, Any]
    headers: dict[str, str]


async def answer_lifespan(receive: Any, send: Any) -> None:
    """Acknowledge an ASGI lifespan until shutdown (the fake upstreams have nothing to set up)."""
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        else:
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_request(scope: Any, receive: Any) -> tuple[bytes, dict[str, str]]:
    """The whole request body and its lower-cased headers."""
    raw = b""
    while True:
        msg = await receive()
        raw += msg.get("body", b"")
        if not msg.get("more_body"):
            break
    return raw, {k.decode().lower(): v.decode() for k, v in scope["headers"]}


class FakeAnthropic:
    """An Anthropic Messages API stand-in: answers from a script, records what it received, and notices when
    a streaming client goes away (`stream_closed`)."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.received: list[Received] = []
        self.stream_closed = threading.Event()
        self.events_sent = 0

    def reset(self) -> None:
        self.script.clear()
        self.received.clear()
        self.stream_closed.clear()
        self.events_sent = 0

    def reply(self, *replies: Reply) -> None:
        self.script.extend(replies)

    @property
    def last(self) -> dict[str, Any]:
        return self.received[-1].body

    def _next(self, body: Mapping[str, Any]) -> Reply:
        if self.script:
            return self.script.pop(0)
        if body.get("stream"):
            return Reply(events=text_events())
        return Reply(body=message())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        raw, headers = await read_request(scope, receive)
        body = json.loads(raw) if raw else {}
        self.received.append(Received(body, headers))
        reply = self._next(body)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        extra = [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        if reply.events is None or reply.status != 200:
            payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": reply.status,
                    "headers": [(b"content-type", b"application/json"), *extra],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), *extra],
            }
        )
        disconnected = asyncio.ensure_future(_disconnect(receive))
        try:
            for i, event in enumerate(reply.events):
                if reply.drop_after is not None and i >= reply.drop_after:
                    raise ConnectionAbortedError("scripted drop")
                if disconnected.done():
                    return
                await send({"type": "http.response.body", "body": sse(event), "more_body": True})
                self.events_sent += 1
                if reply.gap:
                    await asyncio.wait({disconnected}, timeout=reply.gap)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if disconnected.done():
                self.stream_closed.set()
            disconnected.cancel()


async def _disconnect(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


# ------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def fake_server() -> Iterator[tuple[FakeAnthropic, ServerThread]]:
    fake = FakeAnthropic()
    with ServerThread(fake) as server:
        yield fake, server


@pytest.fixture
def fake(fake_server: tuple[FakeAnthropic, ServerThread]) -> FakeAnthropic:
    fake_server[0].reset()
    return fake_server[0]


def gateway_settings(upstream_url: str, **overrides: Any) -> GatewaySettings:
    upstream = UpstreamSettings(
        base_url=upstream_url,
        api_key=UPSTREAM_KEY,
        request_timeout=overrides.pop("request_timeout", 5.0),
        connect_timeout=2.0,
        stream_idle_timeout=overrides.pop("stream_idle_timeout", 5.0),
    )
    return GatewaySettings(
        profile=EZAT,
        catalog=load_catalog(),
        upstream=upstream,
        keys=KeyRing.of([CLIENT_KEY]),
        ping_interval=overrides.pop("ping_interval", 0.25),
        image_allow=overrides.pop("image_allow", AllowList.parse(["127.0.0.1"])),
        **overrides,
    )


@pytest.fixture(scope="session")
def gateway_url(fake_server: tuple[FakeAnthropic, ServerThread]) -> Iterator[str]:
    app = create_app(gateway_settings(fake_server[1].url), Hooks(clock=lambda: 1793318400.0))
    with ServerThread(app) as server:
        yield server.url


@pytest.fixture
def client(gateway_url: str, fake: FakeAnthropic) -> Iterator[Any]:
    import openai

    with openai.OpenAI(
        base_url=f"{gateway_url}/openai/v1", api_key=CLIENT_KEY, max_retries=0, timeout=10
    ) as c:
        yield c


# ------------------------------------------------------------------------------------------- three families


def gemini_answer(
    text: str = "Hello from Gemini.", *, parts: Sequence[Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """A Gemini `GenerateContentResponse` (camelCase, as the REST API sends it)."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": list(parts) if parts is not None else [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "gem-resp-1",
    }


def gemini_sse(pieces: Sequence[str] = ("Hel", "lo"), *, finish: bool = True) -> bytes:
    """`streamGenerateContent?alt=sse`: `data:` lines only, the last one with finishReason and usage; no [DONE]."""
    events: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}]} for p in pieces
    ]
    if finish and events:
        events[-1]["candidates"][0]["finishReason"] = "STOP"
        events[-1]["usageMetadata"] = {
            "promptTokenCount": 12,
            "candidatesTokenCount": 2,
            "totalTokenCount": 14,
        }
    return b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events)


def openai_completion(text: str = "Hello from OpenAI.") -> dict[str, Any]:
    return {
        "id": "chatcmpl-upstream1",
        "object": "chat.completion",
        "created": 1795953600,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
    }


def openai_chunks(*, done: bool = True, usage: bool = True) -> bytes:
    base = {"id": "chatcmpl-upstream1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    chunks: list[dict[str, Any]] = [
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": ""},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
            "usage": None,
        },
        {
            **base,
            "choices": [{"index": 0, "delta": {"content": "Hi"}, "logprobs": None, "finish_reason": None}],
            "usage": None,
        },
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
            "usage": None,
        },
    ]
    if usage:
        chunks.append(
            {**base, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}
        )
    text = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return text + (b"data: [DONE]\n\n" if done else b"")


@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    drop_after: int | None = None  # send this many bytes of the body, then close the connection
    delay: float = 0.0


@dataclass
class Call:
    path: str
    query: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)

    @property
    def family(self) -> str:
        if self.path.endswith("/v1/messages"):
            return "anthropic"
        if ":generateContent" in self.path or ":streamGenerateContent" in self.path:
            return "gemini"
        return "openai"


class FakeFamilies:
    """One upstream that speaks the three provider families by path — Anthropic `/v1/messages`, OpenAI-compatible
    `/v1/chat/completions`, Gemini `/v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse` —
    answering from a script (one Answer per call), else a plain answer built from the request alone."""

    def __init__(self) -> None:
        self.script: list[Answer] = []
        self.calls: list[Call] = []
        self.delay = 0.0  # added before every answer (for concurrency tests)
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.script.clear()
            self.calls.clear()
            self.delay = 0.0

    @staticmethod
    def default(call: Call) -> Answer:
        family = call.family
        stream = bool(json.loads(call.raw).get("stream")) if call.raw and family != "gemini" else False
        if family == "gemini":
            stream = ":streamGenerateContent" in call.path
            if stream:
                return Answer(body=gemini_sse(), content_type="text/event-stream")
            return Answer(body=json.dumps(gemini_answer()).encode())
        if family == "anthropic":
            if stream:
                return Answer(body=b"".join(sse(e) for e in text_events()), content_type="text/event-stream")
            return Answer(body=json.dumps(message()).encode())
        if stream:
            return Answer(body=openai_chunks(), content_type="text/event-stream")
        return Answer(body=json.dumps(openai_completion()).encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        raw, headers = await read_request(scope, receive)
        call = Call(scope["path"], scope.get("query_string", b"").decode(), headers, raw)
        with self._lock:
            self.calls.append(call)
            answer = self.script.pop(0) if self.script else self.default(call)
        if self.delay or answer.delay:
            await asyncio.sleep(self.delay + answer.delay)
        await send(
            {
                "type": "http.response.start",
                "status": answer.status,
                "headers": [(b"content-type", answer.content_type.encode())],
            }
        )
        if answer.drop_after is not None:
            await send(
                {"type": "http.response.body", "body": answer.body[: answer.drop_after], "more_body": True}
            )
            raise ConnectionAbortedError("scripted drop")
        await send({"type": "http.response.body", "body": answer.body})


@pytest.fixture(scope="session")
def families_server() -> Iterator[tuple[FakeFamilies, ServerThread]]:
    fake = FakeFamilies()
    with ServerThread(fake) as server:
        yield fake, server


@pytest.fixture
def families(families_server: tuple[FakeFamilies, ServerThread]) -> FakeFamilies:
    families_server[0].reset()
    return families_server[0]
