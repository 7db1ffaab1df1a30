"""Fake Anthropic, OpenAI and Gemini providers for the `record` tests, served on loopback by `serve`.

Each answers from the request alone, in its family's wire format (wire-reference.md; Gemini after google-genai's
types), with fresh ids on every answer and the account headers a real API sends, so the tests prove they are
scrubbed and ignored by the diff. Bodies are gzipped like the real APIs (GZip skips text/event-stream).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

DEFAULT_STOP = {"anthropic": "end_turn", "openai": "stop", "gemini": "STOP"}
TEXT = ("Cached prefixes", " are reused.")


@dataclass(frozen=True)
class Seen:
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names
    body: Any


@dataclass
class FakeProvider:
    """What the fake answers; every request it got."""

    family: str
    stop: str | None = None  # None: the family's usual stop reason, as the shipped text-basic cassettes say
    fail_status: int | None = None
    echo_key: bool = False  # a misbehaving provider that reflects the credential in a response header
    error_mid_stream: bool = False  # a transient error after HTTP 200, in the family's framing
    seen: list[Seen] = field(default_factory=list)

    @property
    def stop_reason(self) -> str:
        return self.stop or DEFAULT_STOP[self.family]


def _sse(frames: list[bytes], headers: dict[str, str], media: str) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for frame in frames:  # one event per chunk, as the APIs stream
            yield frame

    return StreamingResponse(body(), media_type=media, headers=headers)


async def _seen(fake: FakeProvider, request: Request) -> Seen:
    seen = Seen(
        path=request.url.path,
        query=request.url.query,
        headers={k.lower(): v for k, v in request.headers.items()},
        body=await request.json(),
    )
    fake.seen.append(seen)
    return seen


def _app(path: str, handler: Callable[[Request], Any]) -> Starlette:
    return Starlette(
        routes=[Route(path, handler, methods=["POST"])],
        middleware=[Middleware(GZipMiddleware, minimum_size=0)],
    )


# --- Anthropic Messages ----------------------------------------------------------------------


def _anthropic_usage() -> dict[str, Any]:
    return {
        "input_tokens": 27,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 20,
        "service_tier": "standard",
    }


def _anthropic_events(fake: FakeProvider, message: dict[str, Any]) -> list[bytes]:
    start_usage = {k: v for k, v in _anthropic_usage().items() if k != "cache_creation"} | {
        "output_tokens": 1
    }
    start = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    deltas = [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}},
        )
        for t in TEXT
    ]
    payloads = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
        *deltas,
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": fake.stop_reason, "stop_sequence": None},
                "usage": {k: v for k, v in _anthropic_usage().items() if k.endswith("tokens")},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    if fake.error_mid_stream:
        payloads[4:] = [
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        ]
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in payloads]


def anthropic_app(fake: FakeProvider) -> Starlette:
    async def messages(request: Request) -> Response:
        seen = await _seen(fake, request)
        if "authorization" not in seen.headers and "x-api-key" not in seen.headers:
            return JSONResponse(
                {"type": "error", "error": {"type": "authentication_error", "message": "no key"}}, 401
            )
        extra = {
            "request-id": f"req_{uuid.uuid4().hex}",
            "anthropic-ratelimit-requests-remaining": str(len(fake.seen)),
            "set-cookie": "session=abc; Secure",
            "anthropic-organization-id": "org-0000",
            "retry-after": "0",
        }
        if fake.echo_key:
            extra["x-debug-auth"] = seen.headers.get("authorization", "")
        if fake.fail_status is not None:
            error = {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            }
            return JSONResponse(error, fake.fail_status, headers=extra)
        message = {
            "id": f"msg_{uuid.uuid4().hex}",
            "type": "message",
            "role": "assistant",
            "model": seen.body["model"],
            "content": [{"type": "text", "text": "".join(TEXT)}],
            "stop_reason": fake.stop_reason,
            "stop_sequence": None,
            "stop_details": None,
            "usage": _anthropic_usage(),
        }
        if not seen.body.get("stream"):
            return JSONResponse(message, headers=extra)
        stream_headers = {**extra, "cache-control": "no-cache"}
        return _sse(_anthropic_events(fake, message), stream_headers, "text/event-stream; charset=utf-8")

    return _app("/v1/messages", messages)


# --- OpenAI Chat Completions -----------------------------------------------------------------


def _openai_usage() -> dict[str, Any]:
    return {
        "prompt_tokens": 1250,
        "completion_tokens": 32,
        "total_tokens": 1282,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _openai_chunks(fake: FakeProvider, head: dict[str, Any], body: dict[str, Any]) -> list[bytes]:
    # api.openai.com pads every chunk with `obfuscation` unless the request turns it off.
    padded = (body.get("stream_options") or {}).get("include_obfuscation") is not False
    pad = {"obfuscation": uuid.uuid4().hex[: 2 + len(TEXT)]} if padded else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**head, "object": "chat.completion.chunk", "choices": [choice], "usage": None, **pad}

    chunks: list[dict[str, Any]] = [chunk({"role": "assistant", "content": "", "refusal": None})]
    chunks += [chunk({"content": t}) for t in TEXT]
    chunks.append(chunk({}, fake.stop_reason))
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append(
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": _openai_usage(), **pad}
        )
    frames = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [b"data: [DONE]\n\n"]
    if fake.error_mid_stream:  # OpenAI's mid-stream failure: a data line with an error object, no [DONE]
        error = {
            "error": {
                "message": "The server had an error",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        frames[2:] = [b"data: " + json.dumps(error).encode() + b"\n\n"]
    return frames


def openai_app(fake: FakeProvider) -> Starlette:
    async def chat(request: Request) -> Response:
        seen = await _seen(fake, request)
        extra = {
            "x-request-id": f"req_{uuid.uuid4().hex}",
            "openai-processing-ms": "412",
            "x-ratelimit-remaining-requests": str(10000 - len(fake.seen)),
            "openai-organization": "org-0000",
            "set-cookie": "__cf_bm=abc; Secure",
            "retry-after": "0",
        }
        if fake.echo_key:
            extra["x-debug-auth"] = seen.headers.get("authorization", "")
        if fake.fail_status is not None or not seen.headers.get("authorization", "").startswith("Bearer "):
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error", "param": None}
            return JSONResponse(
                {"error": {**error, "code": "invalid_api_key"}}, fake.fail_status or 401, extra
            )
        head = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "created": 1795953600,
            "model": f"{seen.body['model']}-2026-09-18",  # the dated snapshot, as the API names it
            "service_tier": "default",
            "system_fingerprint": f"fp_{uuid.uuid4().hex[:10]}",
        }
        if seen.body.get("stream"):
            stream_headers = {**extra, "cache-control": "no-cache"}
            return _sse(
                _openai_chunks(fake, head, seen.body), stream_headers, "text/event-stream; charset=utf-8"
            )
        message = {"role": "assistant", "content": "".join(TEXT), "refusal": None, "annotations": []}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": fake.stop_reason}
        answer = {**head, "object": "chat.completion", "choices": [choice], "usage": _openai_usage()}
        return JSONResponse(answer, headers=extra)

    return _app("/v1/chat/completions", chat)


# --- Gemini generateContent / streamGenerateContent ------------------------------------------


def _gemini_answer(fake: FakeProvider, model: str, text: str, count: int, *, last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if last:
        candidate["finishReason"] = fake.stop_reason
    usage = {
        "promptTokenCount": 24,
        "candidatesTokenCount": count,
        "totalTokenCount": 24 + count,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 24}],
    }
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": uuid.uuid4().hex,
    }


def gemini_app(fake: FakeProvider) -> Starlette:
    async def generate(request: Request) -> Response:
        seen = await _seen(fake, request)
        model, _, method = request.path_params["target"].partition(":")
        extra = {
            "vary": "Origin",
            "server": "scaffolding on HTTPServer2",
            "x-content-type-options": "nosniff",
        }
        if fake.echo_key:
            extra["x-debug-auth"] = seen.headers.get("x-goog-api-key", "")
        if fake.fail_status is not None or "x-goog-api-key" not in seen.headers:
            status = fake.fail_status or 403
            error = {
                "code": status,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "UNAUTHENTICATED",
            }
            return JSONResponse({"error": error}, status, headers=extra)
        if method == "generateContent":
            return JSONResponse(_gemini_answer(fake, model, "".join(TEXT), 14, last=True), headers=extra)
        texts = [*TEXT, ""]
        answers = [
            _gemini_answer(fake, model, t, i + 1, last=i == len(texts) - 1) for i, t in enumerate(texts)
        ]
        frames = [b"data: " + json.dumps(a).encode() + b"\r\n\r\n" for a in answers]
        if fake.error_mid_stream:  # Gemini's mid-stream failure: a data line holding an error object
            error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
            frames[1:] = [b"data: " + json.dumps(error).encode() + b"\r\n\r\n"]
        return _sse(frames, extra, "text/event-stream")

    return _app("/v1beta/models/{target:path}", generate)


APPS: dict[str, Callable[[FakeProvider], Starlette]] = {
    "anthropic": anthropic_app,
    "openai": openai_app,
    "gemini": gemini_app,
}
