"""Gateways that go wrong the way real ones do while a run runs (issue 48), each a raw asyncio server on 127.0.0.1
in a thread of the test: one that takes the connection and never answers, a proxy's `502 Bad Gateway` page, 4 KB of
binary, a 300 MB body, a web page where the API should be, a 500 page for the empty request only; and two that answer the empty preflight as an API does and
send each real request on to the replay upstream first (so the wiring probe passes), then stream without end, or cut
the stream mid-event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import urllib.request
from collections.abc import Iterator

HTML_502 = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"
    b"<hr><center>nginx</center></body></html>"
)
HUGE = 300 * 1024 * 1024
_CHUNK = (
    b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"and on "},"finish_reason":null}]}\n\n'
)


def _head(status: str, content_type: str, length: int | None = None) -> bytes:
    size = f"Content-Length: {length}\r\n" if length is not None else "Transfer-Encoding: chunked\r\n"
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{size}Connection: close\r\n\r\n".encode()


def _forward(replay_url: str, body: bytes) -> None:
    """The request's text sent on to the replay upstream as an Anthropic call, so its case marker arrives there."""
    sent = json.loads(body)
    text = json.dumps(sent.get("messages") or sent.get("input") or "")
    upstream = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": text}],
    }
    request = urllib.request.Request(
        replay_url + "/v1/messages", json.dumps(upstream).encode(), {"content-type": "application/json"}
    )
    with contextlib.suppress(OSError):
        urllib.request.urlopen(request, timeout=10).read()


async def _serve_one(
    mode: str, replay_url: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    length = next(
        (
            int(line.split(":", 1)[1])
            for line in head.split("\r\n")
            if line.lower().startswith("content-length:")
        ),
        0,
    )
    body = await reader.readexactly(length) if length else b""
    if mode == "hang":
        await asyncio.sleep(3600)
    elif mode == "html502":
        writer.write(_head("502 Bad Gateway", "text/html", len(HTML_502)) + HTML_502)
    elif mode == "page":  # a web page where the API should be
        page = (
            b"<!doctype html><html><head><title>Acme Gateway - Sign in</title></head><body>...</body></html>"
        )
        writer.write(_head("200 OK", "text/html; charset=utf-8", len(page)) + page)
    elif mode == "binary":
        noise = os.urandom(4096)
        writer.write(_head("200 OK", "application/octet-stream", len(noise)) + noise)
    elif mode == "huge":
        writer.write(_head("200 OK", "application/json", HUGE))
        spaces = b" " * (1 << 20)
        for _ in range(HUGE >> 20):
            writer.write(spaces)
            await writer.drain()
    elif (
        mode == "crash-on-empty"
    ):  # a web framework's 500 page for `{}`, then the kept-alive connection dropped
        if body.strip() == b"{}":
            page = b"Internal Server Error"
            writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(page), page))  # fmt: skip
            await writer.drain()
            await reader.readuntil(b"\r\n\r\n")  # a next request on this connection is dropped unanswered
        else:
            answer = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."},
                                              "finish_reason": "stop"}]}).encode()  # fmt: skip
            writer.write(_head("200 OK", "application/json", len(answer)) + answer)
    elif mode in ("endless", "cut"):
        if body.strip() == b"{}":  # the preflight's empty request: refused as an API refuses it
            refusal = b'{"error":{"message":"messages: required","type":"invalid_request_error","code":null}}'
            writer.write(_head("400 Bad Request", "application/json", len(refusal)) + refusal)
        else:
            await asyncio.get_running_loop().run_in_executor(None, _forward, replay_url, body)
            writer.write(_head("200 OK", "text/event-stream"))
            frame = b"%x\r\n%s\r\n" % (len(_CHUNK * 64), _CHUNK * 64)
            if mode == "cut":  # three events and half of a fourth, then the connection closes mid-chunk
                half = _CHUNK * 3 + _CHUNK[:40]
                writer.write(b"%x\r\n%s" % (len(half) + 100, half))
                await writer.drain()
                return
            while True:  # never a finish reason, never [DONE]
                writer.write(frame)
                await writer.drain()
    await writer.drain()


@contextlib.contextmanager
def hostile_gateway(mode: str, replay_url: str = "") -> Iterator[str]:
    """Serve one mode on a free loopback port; yield its base URL (`…/v1`); stop it."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict[str, asyncio.AbstractServer] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with contextlib.suppress(Exception, asyncio.CancelledError):  # cancelled: the test is over
                await _serve_one(mode, replay_url, reader, writer)
        finally:
            writer.close()

    async def start() -> None:
        box["server"] = await asyncio.start_server(handle, "127.0.0.1", 0)
        started.set()

    def run() -> None:
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(30)
    port = box["server"].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        asyncio.run_coroutine_threadsafe(_shutdown(box["server"]), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


async def _shutdown(server: asyncio.AbstractServer) -> None:
    """Stop listening, cancel every connection still served (a hanging one, an endless one), and wait for them."""
    server.close()
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await server.wait_closed()
    await asyncio.get_running_loop().shutdown_default_executor()
