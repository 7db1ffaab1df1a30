"""The HTTP answers the gateway sends: JSON (encoded by orjson), the error envelope (or a profile's raw body),
an SSE response that stops at once when the client goes away, and the watch for that disconnect."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Final, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse as StarletteJSONResponse
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from reference_gateway import fastjson
from reference_gateway.errors import GatewayError

T = TypeVar("T")

SSE_HEADERS: Final = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class JSONResponse(StarletteJSONResponse):
    """Starlette's JSON response, encoded by orjson: the same bytes for the gateway's answers, faster."""

    def render(self, content: Any) -> bytes:
        return fastjson.dumps(content)


def error_response(error: GatewayError) -> Response:
    if error.raw is not None:
        return Response(
            error.raw.content,
            status_code=error.status,
            headers=dict(error.headers),
            media_type=error.raw.media_type,
        )
    return JSONResponse(error.to_envelope(), status_code=error.status, headers=dict(error.headers))


class EventStreamResponse(StreamingResponse):
    """SSE response that watches for the client going away and then stops the body at once (its `finally`
    closes the upstream request), instead of noticing only at the next failed write."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        pump = asyncio.ensure_future(self._pump(send))
        watch = asyncio.ensure_future(until_disconnect(receive))
        try:
            await asyncio.wait({pump, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (pump, watch):
                task.cancel()
            await asyncio.gather(pump, watch, return_exceptions=True)
            iterator = self.body_iterator
            if hasattr(iterator, "aclose"):
                await iterator.aclose()

    async def _pump(self, send: Send) -> None:
        try:
            async for chunk in self.body_iterator:
                data = (
                    chunk
                    if isinstance(chunk, bytes)
                    else bytes(chunk)
                    if isinstance(chunk, memoryview)
                    else chunk.encode()
                )
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client went away mid-write


async def until_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def unless_disconnected(request: Request, call: Awaitable[T]) -> T | None:
    """Await `call`, but cancel it (closing the upstream request) if the client disconnects first: None then."""
    work = asyncio.ensure_future(call)
    watch = asyncio.ensure_future(until_disconnect(request.receive))
    try:
        await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not work.done():
            work.cancel()
        # `cancel()` only asks: until the cancellation has landed the task has no result (reading one raised
        # InvalidStateError, a 500), so wait for both before looking.
        await asyncio.gather(watch, work, return_exceptions=True)
    if work.cancelled():
        return None
    return work.result()
