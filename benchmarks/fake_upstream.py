"""The peer benchmark's fake Anthropic upstream (`bench_peers.py --serve-upstream`): it answers from the request
alone, the last user message saying `events=N gap_ms=G` for a stream; its first content event carries the time
it was written (CLOCK_MONOTONIC ns, shared by the host's processes)."""

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
