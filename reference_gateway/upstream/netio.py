"""The upstream client's network I/O: httpx's transport interface on aiohttp's client.

`Upstream` builds `httpx.Request`s and reads `httpx.Response`s (and tests put an `httpx.MockTransport` in its
place); this transport sends them with aiohttp, whose connection pool and C HTTP parser cost about a fifth of
the CPU of httpcore's per call (measured in `benchmarks/results/README.md`: 337 µs against 61 µs per call on
the peer benchmark's upstream), and which is most of what the gateway spends on a request.

What reaches the provider is what the httpx request holds: its headers in its order and its bytes, nothing
added (aiohttp's automatic headers are skipped; httpx's request already has its Host, Content-Length, Accept,
Accept-Encoding and User-Agent). What the gateway reads is what httpx's own transport would give: the status,
the raw headers, the body as it came (not decompressed here: `httpx.Response` decodes a content encoding, as
with httpx's own transport), and httpx's errors for the same failures — a refused or unreachable connect or a
certificate that fails verification a `ConnectError`, a connect past its timeout a `ConnectTimeout`, a read
past its timeout a `ReadTimeout`, a connection that ends before the answer or its body a
`RemoteProtocolError` (a reset too, where aiohttp sees it as an incomplete body; as a socket error, a
`ReadError`). The bytes that arrived before a connection ended are read before its error. The timeouts are the request's own (`extensions["timeout"]`,
as `httpx.Timeout.as_dict()` gives them): `connect` for a new connection, `read` between two reads (aiohttp
has no write timeout; `pool` waits for a free connection). Leaving a response before its end closes its
connection, as with httpx; one read to its end goes back to the pool.

A request that fails before any byte of its answer arrived, on a pooled connection that had served an answer
before (the provider closed it while it sat idle — at its idle timeout, or right after an answer, without saying
`Connection: close`, which HTTP allows), is sent once more on a new connection: never after a byte of the answer
arrived, never twice, never when the connection was new (then the failure is the provider's). This is what Go's
transport, urllib3 and httpcore do for the same race (RFC 9112 §9.3.1: the request cannot have been acted on
when the connection closed before it was read); aiohttp retries only idempotent methods, and the gateway's are
POSTs. Whether a byte arrived is counted on the connection, not guessed from the error: aiohttp reports the
peer's close in many forms, by the moment it meets it and the event loop (aiohttp 3.14: client_reqrep.py
`write_bytes`, client_proto.py `connection_lost`, http_writer.py, base_protocol.py). At the write:
`ClientOSError(None, "Can not write request body for …")` (the transport was already closing: aiohttp's
`ClientConnectionResetError` inside), `ClientOSError(EPIPE)` or `(ECONNRESET)` (the socket's send failed),
`ClientConnectionError("Failed to send bytes …")`. At the read: `ServerDisconnectedError` (a FIN; it names the
head parsed so far when there is one), `ClientOSError(ECONNRESET)` (a reset, before or after some bytes). A
timeout is never resent (the provider may be working on the request).

Every failed call is noted for the operator's log line (`errors.note_upstream`): host and path, a reused or new
connection, the attempt, the time to the failure, the library's exception and message (a URL without its query).
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from contextvars import ContextVar
from typing import Any

import aiohttp
import certifi
import httpx
from aiohttp.client_proto import ResponseHandler
from yarl import URL

from reference_gateway.errors import UpstreamFailure, note_upstream

# Response heads of up to 64 KiB a line (aiohttp's default is 8 KiB; h11, httpx's parser, allows a 16 KiB head).
_MAX_LINE = 64 * 1024
_SKIP_AUTO = frozenset({"Accept", "Accept-Encoding", "User-Agent", "Content-Type"})


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An httpx transport sending over one aiohttp session, made on first use on the running loop (the gateway
    makes its `Upstream`, and so this, in the app's lifespan: one loop for the transport's life)."""

    def __init__(
        self,
        *,
        max_connections: int = 200,
        keepalive_expiry: float = 5.0,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self._max_connections = max_connections
        self._keepalive_expiry = keepalive_expiry
        self._verify = verify
        self._session: aiohttp.ClientSession | None = None
        self._fresh: aiohttp.ClientSession | None = None  # for the one retry: a new connection each time
        self._timeouts: dict[tuple[Any, ...], aiohttp.ClientTimeout] = {}

    def _ssl(self) -> ssl.SSLContext | bool:
        if isinstance(self._verify, ssl.SSLContext):
            return self._verify
        if not self._verify:
            return False
        # The CA bundle httpx verifies with by default (certifi's), so that both accept the same certificates.
        return ssl.create_default_context(cafile=certifi.where())

    def _current(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = self._new_session(force_close=False)
        return self._session

    def _new_session(self, *, force_close: bool) -> aiohttp.ClientSession:
        connector = _Connector(
            limit=self._max_connections,
            # a connection of the fresh session is used once and closed (aiohttp: no keep-alive timeout with it)
            keepalive_timeout=None if force_close else self._keepalive_expiry,
            force_close=force_close,
            ssl=self._ssl(),
            enable_cleanup_closed=False,
        )
        return aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,  # httpx.Response decodes, as over httpx's own transport
            trust_env=False,
            max_line_size=_MAX_LINE,
            max_field_size=_MAX_LINE,
            skip_auto_headers=_SKIP_AUTO,
            cookie_jar=aiohttp.DummyCookieJar(),
            request_class=_Request,
        )

    def _retry_session(self) -> aiohttp.ClientSession:
        if self._fresh is None:
            self._fresh = self._new_session(force_close=True)
        return self._fresh

    def _timeout(self, given: Mapping[str, float | None]) -> aiohttp.ClientTimeout:
        key = (given.get("connect"), given.get("read"), given.get("pool"))
        timeout = self._timeouts.get(key)
        if timeout is None:
            connect, read, pool = key
            # aiohttp's `connect` covers waiting for a pooled connection and connecting; `sock_connect` the
            # connect alone, like httpx's `connect`.
            whole = None if pool is None or connect is None else pool + connect
            timeout = aiohttp.ClientTimeout(total=None, connect=whole, sock_connect=connect, sock_read=read)
            self._timeouts[key] = timeout
        return timeout

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._current()
        try:
            content = request.content
        except httpx.RequestNotRead:
            content = await request.aread()
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        timeout = self._timeout(request.extensions.get("timeout", {}))
        url = URL(str(request.url), encoded=True)

        async def send(on: aiohttp.ClientSession, attempt: _Attempt) -> aiohttp.ClientResponse:
            token = _ATTEMPT.set(attempt)  # read by _Request.send in this task: the connection it goes out on
            try:
                return await on.request(
                    request.method,
                    url,
                    headers=headers,
                    data=content or None,
                    allow_redirects=False,
                    timeout=timeout,
                )
            finally:
                _ATTEMPT.reset(token)

        attempt = _Attempt(1)
        try:
            try:
                response = await send(session, attempt)
            except _FAILURES as exc:
                if not attempt.resendable(exc):
                    raise
                note_upstream(attempt.failure(request, exc), resent=True)
                attempt = _Attempt(2)
                response = await send(self._retry_session(), attempt)
        except _FAILURES as exc:
            note_upstream(attempt.failure(request, exc))
            raise _httpx_error(exc, request) from exc
        return httpx.Response(
            response.status,
            headers=list(response.raw_headers),
            stream=_Body(response, request, attempt),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
            request=request,
        )

    async def aclose(self) -> None:
        sessions = (self._session, self._fresh)
        self._session = self._fresh = None
        for session in sessions:
            if session is not None and not session.closed:
                await session.close()


class _Body(httpx.AsyncByteStream):
    """The body of one answer, as aiohttp reads it."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request, attempt: _Attempt) -> None:
        self._response = response
        self._request = request
        self._attempt = attempt

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content = self._response.content
        while True:
            try:
                chunk = await content.readany()
            except _FAILURES as exc:
                rest = _arrived(content)
                if rest:
                    yield rest
                note_upstream(self._attempt.failure(self._request, exc))
                raise _httpx_error(exc, self._request) from exc
            if not chunk:
                return
            yield chunk

    async def aclose(self) -> None:
        self._response.release()  # to the pool when read to its end, else the connection is closed


_FAILURES = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


class _Handler(ResponseHandler):
    """aiohttp's connection protocol, counting the bytes the connection received: more than none before a request
    went out means the connection served an answer before; more than then, that a byte of this answer came."""

    received = 0

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        super().data_received(data)


class _Connector(aiohttp.TCPConnector):
    """aiohttp's connector, its connections made with `_Handler` (aiohttp keeps the protocol factory in
    `_factory`; tests/reference_gateway/upstream/test_netio_reuse.py checks that it still does)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._factory = functools.partial(_Handler, loop=self._loop)  # type: ignore[assignment]


class _Attempt:
    """One attempt at a request: the connection it went out on and that connection's byte count then."""

    __slots__ = ("connection", "number", "received", "started")

    def __init__(self, number: int) -> None:
        self.number = number
        self.started = time.monotonic()
        self.connection: _Handler | None = None
        self.received = 0

    @property
    def reused(self) -> bool:
        return self.received > 0

    def resendable(self, exc: BaseException) -> bool:
        """This failure may be sent once more: a first attempt, on a connection that had served an answer, that
        has received nothing since this request went out; the failure the peer's close (a timeout: never)."""
        connection = self.connection
        if self.number != 1 or connection is None or not self.reused or connection.received != self.received:
            return False
        if isinstance(exc, asyncio.TimeoutError | aiohttp.ClientConnectorError):
            return False
        return isinstance(exc, aiohttp.ClientConnectionError | OSError)

    def failure(self, request: httpx.Request, exc: BaseException) -> UpstreamFailure:
        url = request.url
        return UpstreamFailure(
            host=f"{url.host}:{url.port}" if url.port else url.host,
            path=url.path,
            reused=self.reused,
            attempt=self.number,
            elapsed=time.monotonic() - self.started,
            exception=type(exc).__name__,
            message=_without_query(str(exc) or type(exc).__name__),
        )


_ATTEMPT: ContextVar[_Attempt | None] = ContextVar("reference_gateway_upstream_attempt", default=None)


class _Request(aiohttp.ClientRequest):
    """aiohttp's request, noting on the current attempt the connection it is sent on (and its byte count)."""

    async def send(self, conn: Any) -> aiohttp.ClientResponse:
        attempt = _ATTEMPT.get()
        protocol = conn.protocol
        if attempt is not None and isinstance(protocol, _Handler):
            attempt.connection = protocol
            attempt.received = protocol.received
        return await super().send(conn)


def _without_query(text: str) -> str:
    """A message with any URL's query left out (a query may carry a key)."""
    return " ".join(word.split("?", 1)[0] if "://" in word else word for word in text.split(" "))


def _arrived(content: aiohttp.StreamReader) -> bytes:
    """The bytes that arrived before a failure and were not read yet. aiohttp's `readany` raises the failure
    first once the connection has ended, though it holds them (its buffer is not public); httpx reads them
    before the error, and a stream's events before the drop are the client's (EZAT: the events, then the error
    event). Empty where aiohttp's internals are not as expected."""
    try:
        return content._read_nowait(-1) if content._buffer else b""
    except Exception:  # aiohttp's internals changed: lose those bytes rather than the error
        return b""


def _httpx_error(exc: BaseException, request: httpx.Request) -> httpx.TransportError:
    """The httpx error httpx's own transport raises for the same failure."""
    message = str(exc) or type(exc).__name__
    error: httpx.TransportError
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        error = httpx.ConnectTimeout(message)
    elif isinstance(exc, aiohttp.SocketTimeoutError):
        error = httpx.ReadTimeout(message)
    elif isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        error = httpx.PoolTimeout(message)
    elif isinstance(exc, aiohttp.ClientConnectorError):
        error = httpx.ConnectError(message)
    elif isinstance(
        exc,
        # the end before the answer or its body; an answer aiohttp's parser refused
        aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientResponseError,
    ):
        error = httpx.RemoteProtocolError(message)
    elif isinstance(exc, OSError):  # aiohttp's ClientOSError, a reset
        error = httpx.ReadError(message)
    else:
        error = httpx.TransportError(message)
    error.request = request
    return error


__all__ = ["AiohttpTransport"]
