"""The peer benchmark's fake upstream (`bench_peers.py --serve-upstream`): Anthropic Messages (`/v1/messages`), and
for bench_surfaces.py OpenAI Chat Completions (`/v1/chat/completions`) and OpenAI Responses (`/v1/responses`), each
answering from the request alone, the request's text saying `events=N gap_ms=G` for a stream; an Anthropic
stream's first content event carries the time it was written (CLOCK_MONOTONIC ns, shared by the host's
processes)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from pathlib import Path
from typing import Any

TEXT = "The quick brown fox jumps over the lazy dog. " * 8


def _sse(kind: str, payload: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


MESSAGE = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 80},
    }
).encode()
START = _sse(
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-sonnet-5-5",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 1},
        },
    },
) + _sse(
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)
END = (
    _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    + _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 80},
        },
    )
    + _sse("message_stop", {"type": "message_stop"})
)
DELTA = _sse(
    "content_block_delta",
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "word "}},
)
PARAMS = re.compile(rb"events=(\d+) gap_ms=(\d+)")


WORDS = TEXT.split()
CHAT = json.dumps(
    {
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 1790000000, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 80, "total_tokens": 100},
    }
).encode()  # fmt: skip


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
    chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1790000000, "model": "gpt-4o",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else []}  # fmt: skip
    if usage is not None:
        chunk["usage"] = usage
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def chat_stream(events: int) -> bytes:
    usage = {"prompt_tokens": 20, "completion_tokens": events, "total_tokens": 20 + events}
    return (
        _chunk({"role": "assistant", "content": ""})
        + b"".join(_chunk({"content": "word "}) for _ in range(events))
        + _chunk({}, "stop")
        + _chunk({}, usage=usage)
        + b"data: [DONE]\n\n"
    )


def _response(text: str) -> dict[str, Any]:
    return {"id": "resp_bench", "object": "response", "created_at": 1790000000, "status": "completed",
            "model": "gpt-5.5", "output": [{"type": "message", "id": "msg_bench", "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": {"input_tokens": 20, "output_tokens": 80, "total_tokens": 100,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}  # fmt: skip


RESPONSE = json.dumps(_response(TEXT)).encode()


def responses_stream(events: int) -> bytes:
    out, n = [], 0

    def event(kind: str, data: dict[str, Any]) -> None:
        nonlocal n
        out.append(
            f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': n, **data})}\n\n".encode()
        )
        n += 1

    started = {**_response(""), "status": "in_progress", "output": []}
    event("response.created", {"response": started})
    item = {"type": "message", "id": "msg_bench", "status": "in_progress", "role": "assistant", "content": []}
    event("response.output_item.added", {"output_index": 0, "item": item})
    part = {"type": "output_text", "text": "", "annotations": []}
    event(
        "response.content_part.added",
        {"item_id": "msg_bench", "output_index": 0, "content_index": 0, "part": part},
    )
    for _ in range(events):
        event("response.output_text.delta", {"item_id": "msg_bench", "output_index": 0, "content_index": 0,
                                             "delta": "word "})  # fmt: skip
    text = "word " * events
    event(
        "response.output_text.done",
        {"item_id": "msg_bench", "output_index": 0, "content_index": 0, "text": text},
    )
    event("response.content_part.done", {"item_id": "msg_bench", "output_index": 0, "content_index": 0,
                                         "part": {**part, "text": text}})  # fmt: skip
    done = _response(text)
    event("response.output_item.done", {"output_index": 0, "item": done["output"][0]})
    event("response.completed", {"response": done})
    return b"".join(out)


async def _answer(send: Any, content_type: bytes, body: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def upstream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path = scope.get("path", "")
    if path.endswith(("/chat/completions", "/responses")):
        stream = b'"stream":true' in body.replace(b" ", b"")
        m = PARAMS.search(body)
        events = int(m.group(1)) if m else 20
        if path.endswith("/chat/completions"):
            await _answer(send, b"text/event-stream" if stream else b"application/json",
                          chat_stream(events) if stream else CHAT)  # fmt: skip
        else:
            await _answer(send, b"text/event-stream" if stream else b"application/json",
                          responses_stream(events) if stream else RESPONSE)  # fmt: skip
        return
    if b'"stream":true' not in body.replace(b" ", b""):
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(MESSAGE)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": MESSAGE})
        return
    m = PARAMS.search(body)
    events, gap = (int(m.group(1)), int(m.group(2))) if m else (20, 0)
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )
    await send({"type": "http.response.body", "body": START, "more_body": True})
    if gap:
        await asyncio.sleep(gap / 1000)
    # The first content event carries the time it was written (monotonic ns, shared by the host's processes).
    stamp = _sse(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": f"t={time.monotonic_ns()} "},
        },
    )
    await send({"type": "http.response.body", "body": stamp, "more_body": True})
    if gap:
        await asyncio.sleep(gap / 1000)
    left = events - 1
    while left > 0:
        n = min(left, 50)
        await send({"type": "http.response.body", "body": DELTA * n, "more_body": True})
        left -= n
    await send({"type": "http.response.body", "body": END, "more_body": False})


def serve_upstream(port_file: str) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    Path(port_file).write_text(str(sock.getsockname()[1]))
    uvicorn.Server(uvicorn.Config(upstream_app, log_level="warning", access_log=False)).run(sockets=[sock])
