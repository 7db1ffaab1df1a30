"""Tiny gateways for the plugin tests: one that keeps a small contract, and broken variants of it.

Just enough OpenAI-over-Anthropic translation for the rules in test_plugin.py; each `bug` breaks one
promise the way real gateways do (real-gateway-bugs.md).
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

KEY = "tiny-key"
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def _error(
    status: int, message: str, type_: str, code: str | None, headers: dict[str, str] | None = None
) -> Response:
    body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def make_gateway(upstream_url: str, bug: str | None = None, preflight_spared: bool = False) -> Starlette:
    """`preflight_spared`: the harness's preflight (an empty JSON object) is refused as an API refuses it, whatever
    the bug does to the rules' requests."""

    async def chat(request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return _error(401, "invalid key", "invalid_request_error", "invalid_api_key")
        if preflight_spared and await request.body() == b"{}":
            return _error(400, "messages: required", "invalid_request_error", None)
        if bug == "hang":
            await asyncio.sleep(30)
        if bug == "garbage":
            return Response(b"\x00\xffnot json at all", media_type="application/json")
        if bug == "cut":

            async def cut() -> AsyncIterator[bytes]:
                yield b'{"error": {"message": "half an ans'
                raise ConnectionResetError("the gateway drops the connection mid-body")

            return StreamingResponse(cut(), status_code=400, media_type="application/json")
        body = await request.json()
        if not body.get("messages"):
            return _error(400, "messages: required", "invalid_request_error", None)
        if body.get("n", 1) > 1 and bug != "drops-n":
            return _error(400, "n: only 1 choice per request is supported", "invalid_request_error", None)
        stream = bool(body.get("stream"))
        text = body["messages"][0]["content"]
        upstream_body = {
            "model": body["model"],
            "max_tokens": 1024,
            "stream": stream,
            "messages": [{"role": "user", "content": text}],
        }
        rid = uuid.uuid4().hex
        client = httpx.AsyncClient(base_url=upstream_url, trust_env=False)
        upstream = await client.send(
            client.build_request("POST", "/v1/messages", json=upstream_body), stream=True
        )
        if upstream.status_code != 200:
            await upstream.aread()
            await client.aclose()
            retry = (
                {"retry-after": upstream.headers["retry-after"]} if "retry-after" in upstream.headers else {}
            )
            if upstream.status_code == 529 and bug != "passes-529":
                return _error(503, "overloaded", "server_error", "overloaded", retry)
            return _error(
                upstream.status_code if bug == "passes-529" else 500, "upstream", "server_error", None
            )
        base = {"id": f"chatcmpl-{rid}", "created": 1793318400, "model": body["model"]}
        if not stream:
            answer = json.loads(await upstream.aread())
            await client.aclose()
            content = "".join(b["text"] for b in answer["content"] if b["type"] == "text")
            finish = answer["stop_reason"] if bug == "leaks-stop-reason" else FINISH[answer["stop_reason"]]
            return JSONResponse(
                {
                    **base,
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content, "refusal": None},
                            "logprobs": None,
                            "finish_reason": finish,
                        }
                    ],
                    "usage": _usage(answer["usage"]),
                },
                headers={"request-id": rid},
            )

        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        async def events() -> AsyncIterator[bytes]:
            def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
                data = {
                    **base,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                }
                return f"data: {json.dumps(data)}\n\n".encode()

            yield chunk({"role": "assistant", "content": ""})
            usage: dict[str, Any] = {}
            stop = "end_turn"
            buffer = b""
            async for raw in upstream.aiter_raw():
                buffer += raw
                while b"\n\n" in buffer:
                    event, buffer = buffer.split(b"\n\n", 1)
                    data = next(
                        (line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:")), b""
                    )
                    if not data:
                        continue
                    payload = json.loads(data)
                    if payload["type"] == "message_start":
                        usage.update(payload["message"]["usage"])
                    elif (
                        payload["type"] == "content_block_delta" and payload["delta"]["type"] == "text_delta"
                    ):
                        yield chunk({"content": payload["delta"]["text"]})
                    elif payload["type"] == "message_delta":
                        stop = payload["delta"]["stop_reason"]
                        usage.update(payload["usage"])
            await upstream.aclose()
            await client.aclose()
            finish = stop if bug == "leaks-stop-reason" else FINISH[stop]
            yield chunk({}, finish)
            if include_usage:
                yield f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', 'choices': [], 'usage': _usage(usage)})}\n\n".encode()
            if bug != "no-done":
                yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream", headers={"request-id": rid})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _usage(u: dict[str, Any]) -> dict[str, Any]:
    prompt = (
        u.get("input_tokens", 0)
        + (u.get("cache_read_input_tokens") or 0)
        + (u.get("cache_creation_input_tokens") or 0)
    )
    completion = u.get("output_tokens", 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@contextmanager
def serve(app: Starlette) -> Iterator[str]:
    """Serve an ASGI app on 127.0.0.1 on a free port in a thread; yield its base URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="error", lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("tiny gateway did not start")
        threading.Event().wait(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
