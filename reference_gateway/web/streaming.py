"""The one SSE loop: a provider's stream, opened, relayed to the client as its events arrive, with `: ping`
comments while the provider is quiet. Events that arrive together go out in one write.

What the events become is the pump's job (a family's stream translator, encoded); how a flow decides that a
stream has started (at once, or at its first output) is the flow's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from reference_gateway import errors
from reference_gateway.errors import GatewayError
from reference_gateway.translate.chunks import PING, ChunkSource, Pump, encode
from reference_gateway.web.responses import SSE_HEADERS, EventStreamResponse

_BATCH = 64  # upstream events whose chunks may share one write to the client
_END_TURNS = 8  # loop turns the end of a finished stream may take to be read (it needs no I/O when it is)


# What the SSE loop drives: upstream events in, bytes for the client out.
StreamPump = Pump[bytes]


class Encoded:
    """A `ChunkSource` whose items are encoded as SSE bytes: the pump the loop drives."""

    def __init__(self, source: ChunkSource) -> None:
        self._source = source

    @property
    def finished(self) -> bool:
        return self._source.finished

    def feed(self, event: Any) -> list[bytes]:
        return [encode(item) for item in self._source.feed(event)]

    def fail(self, error: GatewayError) -> list[bytes]:
        return [encode(item) for item in self._source.fail(error)]

    def end_of_stream(self) -> list[bytes]:
        return [encode(item) for item in self._source.end_of_stream()]


def pump_step(pump: StreamPump, task: asyncio.Future[Any], request_id: str) -> list[bytes]:
    """The client's bytes for one finished read of the upstream stream: an event, its end or its failure."""
    return _guarded(pump, request_id, _feed_result, pump, task)


def pump_event(pump: StreamPump, event: Any, request_id: str) -> list[bytes]:
    """The client's bytes for one upstream event (a translator that fails ends the stream with an error)."""
    return _guarded(pump, request_id, pump.feed, event)


def _feed_result(pump: StreamPump, task: asyncio.Future[Any]) -> list[bytes]:
    return pump.feed(task.result())


def _guarded(pump: StreamPump, request_id: str, step: Callable[..., list[bytes]], *args: Any) -> list[bytes]:
    """`step(*args)`, its end of the stream or its failure as the client's bytes."""
    try:
        return step(*args)
    except StopAsyncIteration:
        return pump.end_of_stream()
    except GatewayError as error:
        errors.note_error(error)
        return pump.fail(error)
    except Exception as exc:
        errors.note_error(exc)  # the request's error line names it (its type and where it was raised)
        failure = errors.server_error()
        errors.note_error(failure)
        return pump.fail(failure)


def event_stream(
    opened: AbstractAsyncContextManager[Any],
    events: AsyncIterator[Any],
    pump: StreamPump,
    *,
    ping_interval: float,
    request_id: str,
    held: Sequence[bytes] = (),
) -> EventStreamResponse:
    """The SSE response for a stream whose context `opened` is entered and whose `events` may already be partly
    read (`held`: the bytes of what was read, sent first). The context is left when the body ends, fails or the
    client goes away (which closes the upstream request)."""

    async def body() -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        pending: asyncio.Future[Any] | None = None
        drain: Callable[[int], list[Any]] | None = getattr(events, "drain", None)
        try:
            if held:
                yield b"".join(held)
            last_write = loop.time()
            while not pump.finished:
                if pending is None:
                    pending = asyncio.ensure_future(events.__anext__())
                wait = max(0.0, last_write + ping_interval - loop.time())
                done, _ = await asyncio.wait({pending}, timeout=wait)
                if not done:
                    # EZAT: "During long pauses EZAT sends `: ping` comment lines".
                    last_write = loop.time()
                    yield PING
                    continue
                # The events already read with this one (one upstream read often holds many) are handled before
                # writing, so that they go out in one write: those the iterator has decoded already are taken
                # at once (`drain`, no task and no loop turn per event), then the next read is given one turn
                # of the loop, which finishes it only if it needs no more I/O. Nothing waits for more data, and
                # a write holds at most _BATCH events' chunks.
                out: list[bytes] = []
                count = 0
                while True:
                    task, pending = pending, None
                    out += pump_step(pump, task, request_id)
                    count += 1
                    if drain is not None and not pump.finished:
                        for event in drain(_BATCH - count):
                            out += pump_event(pump, event, request_id)
                            count += 1
                            if pump.finished:
                                break
                    if pump.finished or count >= _BATCH:
                        break
                    pending = asyncio.ensure_future(events.__anext__())
                    await asyncio.sleep(0)
                    if not pending.done():
                        break
                if out:
                    last_write = loop.time()
                    yield b"".join(out)
            if pending is None:
                # The upstream's end of the stream (after its last event) is usually read already: reading it,
                # within a few loop turns and without waiting for the network, lets the upstream connection be
                # kept for the next call instead of being closed unfinished.
                pending = asyncio.ensure_future(events.__anext__())
                for _ in range(_END_TURNS):
                    if pending.done():
                        break
                    await asyncio.sleep(0)
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)
            await opened.__aexit__(None, None, None)

    return EventStreamResponse(body(), media_type="text/event-stream", headers=SSE_HEADERS)
