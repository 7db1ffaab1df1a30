"""What an inbound adapter is to the app: the endpoints it serves under a base path, each answered through the
profile's flow; and `serve_as_chat`, how an adapter that bridges has the flow serve a chat body for it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute
from starlette.types import Message

from reference_gateway.adapters import CARRY_REASONING
from reference_gateway.flows.base import Flow
from reference_gateway.sse import SSEDecoder


class InboundAdapter(Protocol):
    name: str  # the API's name, as the harness's surfaces name it (`chat-completions`)

    def routes(self, base: str, flow: Flow) -> Sequence[BaseRoute]:
        """The routes of this API under one base path (`/openai/v1`), answered by `flow` (a WebSocket route among
        them for an API that is also spoken over one)."""
        ...


async def serve_as_chat(
    flow: Flow, request: Request, chat: bytes, endpoint: str, *, carry_reasoning: bool = False
) -> Response:
    """The flow's answer to `chat` (a chat body) as if the client had posted it to `{base}/chat/completions`:
    the client's own request otherwise (its headers, key, request id), and its disconnect still reaches the flow.
    `endpoint` is the path suffix the client used (`/messages`, `/responses`); `carry_reasoning`: the bridge carries
    the provider's reasoning blocks in its own API (adapters.CARRY_REASONING)."""
    scope = dict(request.scope)
    if carry_reasoning:
        scope[CARRY_REASONING] = True
    scope["path"] = scope["path"].removesuffix(endpoint) + "/chat/completions"
    headers = [(k, v) for k, v in scope["headers"] if k not in (b"content-length", b"content-type")]
    scope["headers"] = [
        *headers,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(chat)).encode()),
    ]
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": chat, "more_body": False}
        return await request.receive()  # the client's own disconnect reaches the flow

    return await flow.chat_completions(Request(scope, receive))


class ChunkTranslator(Protocol):
    """Chat chunks in, another API's stream events out (the bridges' StreamBridge)."""

    def feed(self, chunk: Any) -> list[bytes]: ...

    def end(self) -> list[bytes]: ...


# The flow's answer headers a bridge does not pass on: the chat answer's framing, which the bridge makes anew.
_FRAMING = frozenset({"content-type", "content-length", "transfer-encoding", "cache-control", "connection"})


def flow_headers(headers: Any) -> dict[str, str]:
    """The headers the flow put on its chat answer that a bridge passes on with the answer it makes of it (Relay's
    X-Relay-Cost-Usd and X-Relay-Cache: the cost of the answer is the same in any API)."""
    return {name.lower(): value for name, value in headers.items() if name.lower() not in _FRAMING}


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


async def translated_stream(
    answer: StreamingResponse, translator: ChunkTranslator, keepalive: Callable[[bytes], bytes]
) -> AsyncIterator[bytes]:
    """The flow's chat SSE bytes in, the translator's events out; a keep-alive comment of the flow's becomes
    `keepalive(comment)` (a Messages `ping` event, a Responses comment as it came)."""
    decoder = SSEDecoder()
    iterator = answer.body_iterator
    try:
        async for piece in iterator:
            data = (
                piece
                if isinstance(piece, bytes)
                else bytes(piece)
                if isinstance(piece, memoryview)
                else piece.encode()
            )
            out: list[bytes] = []
            events = decoder.feed(data)
            if not events and data.lstrip().startswith(b":"):
                out.append(keepalive(data))
            for sse in events:
                if sse.data.strip() == "[DONE]":
                    out += translator.end()
                else:
                    out += translator.feed(parse_json(sse.data.encode()))
            if out:
                yield b"".join(out)
        tail = translator.end()
        if tail:
            yield b"".join(tail)
    finally:
        if hasattr(iterator, "aclose"):
            await iterator.aclose()


async def open_passthrough(
    upstream: Any,
    endpoint: Any,
    content: bytes,
    *,
    query: str,
    request_id: str,
    headers_of: Callable[[Any], Any],
) -> tuple[Response | None, Any, Any]:
    """A pass-through call opened as a stream: (the answer to give, None, None) when the provider did not answer
    200 (its body and status as they came, `headers_of` picking the headers passed back), else (None, the open
    response, the context to close once its bytes are relayed)."""
    opened = upstream.passthrough(endpoint, content, query=query, request_id=request_id, stream=True)
    response = await opened.__aenter__()
    if response.status_code == 200:
        return None, response, opened
    try:
        await response.aread()
        return (
            Response(
                response.content, status_code=response.status_code, headers=headers_of(response.headers)
            ),
            None,
            None,
        )
    finally:
        await opened.__aexit__(None, None, None)
