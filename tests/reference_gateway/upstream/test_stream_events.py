"""The upstream stream's events (reference_gateway.upstream.client.SSEEvents / DecodedEvents): `drain` takes the events
already read, in order, and a malformed event is still an error in its turn, after the events before it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from reference_gateway.errors import GatewayError
from reference_gateway.upstream.client import DecodedEvents, SSEEvents


def response(*chunks: bytes) -> httpx.Response:
    async def body() -> Any:
        for chunk in chunks:
            yield chunk

    return httpx.Response(200, content=body())


def test_drain_takes_what_one_read_held_in_order() -> None:
    async def body() -> None:
        events = DecodedEvents(
            SSEEvents(
                response(
                    b'data: {"n":1}\n\ndata: {"n":2}\n\ndata: 7\n\ndata: {"n":3}\n\n', b'data: {"n":4}\n\n'
                )
            )
        )
        assert await events.__anext__() == {"n": 1}
        assert events.drain(10) == [{"n": 2}, {"n": 3}]  # the JSON value that is no object is skipped
        assert events.drain(10) == []  # the next chunk needs a read
        assert await events.__anext__() == {"n": 4}
        with pytest.raises(StopAsyncIteration):
            await events.__anext__()

    asyncio.run(body())


def test_drain_stops_at_its_limit() -> None:
    async def body() -> None:
        events = SSEEvents(response(b"".join(b"data: %d\n\n" % i for i in range(5))))
        assert (await events.__anext__()).data == "0"
        assert [e.data for e in events.drain(2)] == ["1", "2"]
        assert [e.data for e in events.drain(9)] == ["3", "4"]

    asyncio.run(body())


def test_a_malformed_event_fails_in_its_turn() -> None:
    async def body() -> None:
        events = DecodedEvents(
            SSEEvents(response(b'data: {"n":1}\n\ndata: {"n":2}\n\ndata: {oops\n\ndata: {"n":3}\n\n'))
        )
        assert await events.__anext__() == {"n": 1}
        assert events.drain(10) == [{"n": 2}]
        assert events.drain(10) == []
        with pytest.raises(GatewayError, match="malformed stream event"):
            await events.__anext__()

    asyncio.run(body())


def test_an_event_read_ahead_is_put_back() -> None:
    async def body() -> None:
        events = SSEEvents(response(b"data: a\n\ndata: b\n\n"))
        first = await events.__anext__()
        events.unread(first)
        assert [e.data for e in events.drain(5)] == ["a", "b"]

    asyncio.run(body())
