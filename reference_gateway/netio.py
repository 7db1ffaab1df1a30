"""The upstream client's sockets: an httpcore network backend on asyncio's own transports and protocols.

httpx's default backend goes through anyio, which costs, on every read and write, a cancel scope, a timeout
scope and a checkpoint (an extra turn of the event loop); on every call a dictionary of the socket's
attributes is built to ask whether an idle connection is readable. This backend keeps httpcore (the pool,
HTTP/1.1 by h11, TLS) and does the same socket work directly, with the same httpcore errors for the same
failures: a connection lost mid-read is a `ReadError`, a read or write that waits past its timeout a
`ReadTimeout` or `WriteTimeout`, a refused or unreachable connect a `ConnectError`, one past its timeout a
`ConnectTimeout`. Bytes already received are read before the end or the error.

One thing is different, on purpose: what httpcore writes is sent when it next reads (or once 64 KB are
waiting), so that a request's head and body leave in one write, one TCP segment, instead of two.
"""

from __future__ import annotations

import asyncio
import select
import ssl
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar, cast

import httpcore

T = TypeVar("T")

_READ_HIGH = 256 * 1024  # bytes received and not yet read before the transport stops reading
_WRITE_COALESCE = 64 * 1024  # bytes written and not yet sent before they are sent without waiting for a read

_Options = Iterable[Any]  # httpcore's SOCKET_OPTION tuples


class _Protocol(asyncio.Protocol):
    """What the transport delivers, kept until the stream reads it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.paused_reading = False
        self.paused_writing = False
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio.Transport, only alike.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _READ_HIGH and not self.paused_reading and self.transport is not None:
            self.paused_reading = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        self._wake()
        self._wake_writer()

    def pause_writing(self) -> None:
        self.paused_writing = True

    def resume_writing(self) -> None:
        self.paused_writing = False
        self._wake_writer()

    @property
    def readable(self) -> bool:
        return bool(self.buffer) or self.eof or self.lost

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _wake_writer(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    async def wait_readable(self, timeout: float | None) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await _bounded(self._waiter, timeout, httpcore.ReadTimeout)
        finally:
            self._waiter = None

    async def wait_drained(self, timeout: float | None) -> None:
        self._drained = asyncio.get_running_loop().create_future()
        try:
            await _bounded(self._drained, timeout, httpcore.WriteTimeout)
        finally:
            self._drained = None


async def _bounded(future: asyncio.Future[None], timeout: float | None, error: type[Exception]) -> None:
    """Await `future`; past `timeout` seconds, `error` instead (a timer, not a task)."""
    if timeout is None:
        await future
        return

    def expire() -> None:
        if not future.done():
            future.set_exception(error(f"timed out after {timeout:g} s"))

    handle = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        await future
    finally:
        handle.cancel()


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._closed = False

    def _flush(self) -> None:
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        # A connection the peer closed takes no more bytes (httpcore ignores a failed request write and reads
        # the answer, if any, next).
        if not self._transport.is_closing():
            self._transport.write(data)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._flush()
        protocol = self._protocol
        if self._closed:
            raise httpcore.ReadError("the connection is closed")
        if not protocol.readable:
            await protocol.wait_readable(timeout)
        buffer = protocol.buffer
        if buffer:
            if len(buffer) <= max_bytes:
                data = bytes(buffer)
                buffer.clear()
            else:
                data = bytes(buffer[:max_bytes])
                del buffer[:max_bytes]
            if protocol.paused_reading and len(buffer) <= _READ_HIGH // 2 and not protocol.lost:
                protocol.paused_reading = False
                self._transport.resume_reading()
            return data
        if protocol.error is not None:
            raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
        return b""  # the end of the stream

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if self._closed or protocol.lost or self._transport.is_closing():
            raise httpcore.WriteError(str(protocol.error or "the connection is closed"))
        self._pending.append(buffer)
        self._pending_size += len(buffer)
        if self._pending_size >= _WRITE_COALESCE:
            self._flush()
            if protocol.paused_writing:
                await protocol.wait_drained(timeout)
                if protocol.lost:
                    raise httpcore.WriteError(str(protocol.error or "the connection is closed"))

    async def aclose(self) -> None:
        self._closed = True
        self._pending, self._pending_size = [], 0
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self._flush()
        loop = asyncio.get_running_loop()
        try:
            transport = await _within(
                timeout,
                loop.start_tls(self._transport, self._protocol, ssl_context, server_hostname=server_hostname),
            )
        except asyncio.TimeoutError as exc:  # (TimeoutError itself from Python 3.11)
            await self.aclose()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(str(exc)) from exc
        tls = cast(asyncio.Transport, transport)
        self._protocol.transport = tls
        return AsyncioStream(tls, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":
            # What was delivered already, else what the socket holds that the loop has not delivered yet
            # (an idle connection the server closed is readable: httpcore then opens another).
            return self._protocol.readable or _socket_readable(self._transport.get_extra_info("socket"))
        return None


def _socket_readable(sock: Any) -> bool:
    fd = -1 if sock is None else sock.fileno()
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: _Options | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            transport, protocol = await _within(
                timeout, loop.create_connection(_Protocol, host, port, local_addr=local)
            )
        except asyncio.TimeoutError as exc:  # (TimeoutError itself from Python 3.11)
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        _set_options(transport, socket_options)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: _Options | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await _within(timeout, loop.create_unix_connection(_Protocol, path))
        except asyncio.TimeoutError as exc:  # (TimeoutError itself from Python 3.11)
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        _set_options(transport, socket_options)
        return AsyncioStream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _set_options(transport: asyncio.BaseTransport, options: _Options | None) -> None:
    sock = transport.get_extra_info("socket")
    for option in options or ():
        if sock is not None:
            sock.setsockopt(*option)


async def _within(timeout: float | None, call: Awaitable[T]) -> T:
    if timeout is None:
        return await call
    return await asyncio.wait_for(call, timeout)


def install(transport: Any) -> bool:
    """Put this backend under an `httpx.AsyncHTTPTransport`'s connection pool (for the connections it opens
    from now on); False (and nothing changed) if the transport is not built the way this expects."""
    pool = getattr(transport, "_pool", None)
    if not isinstance(pool, httpcore.AsyncConnectionPool) or not hasattr(pool, "_network_backend"):
        return False
    pool._network_backend = AsyncioBackend()
    return True


__all__ = ["AsyncioBackend", "AsyncioStream", "install"]
