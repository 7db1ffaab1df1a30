"""The upstream transport and a provider that closes pooled connections (reference_gateway.upstream.netio):
a request that meets a connection the provider closed while it sat in the pool, before any byte of its answer,
is sent once more on a new connection; never after a byte arrived, never twice, never for a new connection."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from reference_gateway.upstream import netio

Behaviour = Callable[
    [int, int, asyncio.StreamWriter], Awaitable[bool]
]  # (request no., on this connection, w)

BODY = b'{"ok":true}'
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
    len(BODY),
    BODY,
)
EVENTS = [b'data: {"n":%d}\n\n' % i for i in range(5)] + [b"data: [DONE]\n\n"]
STREAM = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in EVENTS)
    + b"0\r\n\r\n"
)


class Server:
    """An HTTP/1.1 server on loopback that reads each request on a connection and lets `behaviour` write the
    answer (or not); it counts the requests it read, so a retry is visible as a second read."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests = 0
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        on_this = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                self.requests += 1
                on_this += 1
                if not await self.behaviour(self.requests, on_this, writer):
                    break  # close the connection, saying nothing about it
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def serving(behaviour: Behaviour) -> AsyncIterator[tuple[str, Server]]:
    server = Server(behaviour)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1/chat", server
    finally:
        listener.close()


async def post(client: httpx.AsyncClient, url: str) -> bytes:
    response = await client.post(url, content=b'{"stream":true}')
    return await response.aread()


@contextlib.asynccontextmanager
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """One client on one transport for the whole test (closing the client closes its pool)."""
    async with httpx.AsyncClient(transport=netio.AiohttpTransport(), timeout=5.0) as one:
        yield one


async def keep_then_close_on_the_next(_n: int, on_this: int, writer: asyncio.StreamWriter) -> bool:
    """Answers the first request on a connection and keeps it; a request that arrives on it later finds it
    closed unanswered (the provider's idle close, met by the gateway's next request)."""
    if on_this > 1:
        return False
    writer.write(ANSWER)
    await writer.drain()
    return True


def test_a_request_on_a_connection_closed_in_the_pool_is_sent_again_on_a_new_one() -> None:
    async def go() -> None:
        async with client() as transport, serving(keep_then_close_on_the_next) as (url, server):
            for _ in range(5):
                assert await post(transport, url) == BODY
        # requests 1, 3, 5 open a connection the pool keeps; 2 and 4 meet it closed, then go out once more on a
        # connection of their own (closed after the answer): 1 + 2 + 1 + 2 + 1 reads
        assert server.requests == 7

    asyncio.run(asyncio.wait_for(go(), 30))


def test_never_twice() -> None:
    async def only_the_first(n: int, _on_this: int, writer: asyncio.StreamWriter) -> bool:
        if n > 1:
            return False
        writer.write(ANSWER)
        await writer.drain()
        return True

    async def go() -> None:
        async with client() as transport, serving(only_the_first) as (url, server):
            assert await post(transport, url) == BODY
            with pytest.raises(httpx.RemoteProtocolError):
                await post(transport, url)
        assert server.requests == 3  # the first; the second on the pooled connection and once more, no more

    asyncio.run(asyncio.wait_for(go(), 30))


def test_never_after_a_byte_of_the_answer() -> None:
    async def part_of_the_second(_n: int, on_this: int, writer: asyncio.StreamWriter) -> bool:
        writer.write(ANSWER if on_this == 1 else ANSWER[:20])
        await writer.drain()
        return on_this == 1

    async def go() -> None:
        async with client() as transport, serving(part_of_the_second) as (url, server):
            assert await post(transport, url) == BODY
            with pytest.raises(httpx.TransportError):
                await post(transport, url)
        assert server.requests == 2  # the provider may have acted on it: not sent again

    asyncio.run(asyncio.wait_for(go(), 30))


def test_never_for_a_new_connection() -> None:
    async def never(_n: int, _on_this: int, _writer: asyncio.StreamWriter) -> bool:
        return False

    async def go() -> None:
        async with client() as transport, serving(never) as (url, server):
            with pytest.raises(httpx.RemoteProtocolError):
                await post(transport, url)
        assert server.requests == 1  # a new connection that ends unanswered is the provider's failure

    asyncio.run(asyncio.wait_for(go(), 30))


@pytest.mark.parametrize("answer", [ANSWER, STREAM], ids=["json", "stream"])
def test_5000_requests_to_a_provider_that_closes_after_every_answer(answer: bytes) -> None:
    """The race itself: the provider closes each connection right after its answer, without `Connection:
    close`; the pool may hand that connection to the next request before it sees the close."""

    async def answer_and_close(_n: int, _on_this: int, writer: asyncio.StreamWriter) -> bool:
        writer.write(answer)
        await writer.drain()
        return False

    want = BODY if answer is ANSWER else b"".join(EVENTS)

    async def go() -> None:
        transport = netio.AiohttpTransport()
        failures: list[str] = []
        async with serving(answer_and_close) as (url, server):
            async with httpx.AsyncClient(transport=transport, timeout=5.0) as client:

                async def one() -> None:
                    try:
                        response = await client.post(url, content=b"{}")
                        if await response.aread() != want:
                            failures.append("a different answer")
                    except httpx.TransportError as exc:
                        failures.append(repr(exc))

                for _ in range(5000 // 8):
                    await asyncio.gather(*(one() for _ in range(8)))
            await transport.aclose()
        assert failures == [], f"{len(failures)} of 5000 failed: {failures[:3]}"
        assert server.requests >= 5000

    asyncio.run(asyncio.wait_for(go(), 120))
