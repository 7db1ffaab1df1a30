"""The only module that talks to the providers: one pooled `httpx.AsyncClient` for every channel and family.
Where a call goes and which key it carries is the family adapter's (`Endpoint`); what the answer must be, too.

Every httpx failure and every non-2xx answer becomes a `GatewayError` here, in the profile's error style.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from reference_gateway import fastjson
from reference_gateway.errors import (
    GatewayError,
    bad_upstream_answer,
    forwarded,
    from_upstream_body,
    html_page,
    invalid_request,
    note_upstream_status,
    server_error,
    timeout,
)
from reference_gateway.jsonorder import canonical_dumps, compact_dumps
from reference_gateway.sse import ServerSentEvent, SSEDecoder
from reference_gateway.upstream import netio

_MAX_ERROR_BODY = 64 * 1024
T = TypeVar("T")


@dataclass(frozen=True)
class UpstreamSettings:
    base_url: str
    api_key: str | None
    # 2023-06-01 still accepts temperature/top_p, which EZAT forwards to models with capabilities.sampling
    # (2026-10-21 removed them; wire reference 1.1). output_config and adaptive thinking are body fields.
    anthropic_version: str = "2023-06-01"
    # EZAT: "A non-streaming request took longer than 590 seconds" → 504 timeout.
    request_timeout: float = 590.0
    connect_timeout: float = 10.0
    # A stream whose upstream sends nothing (not even a ping) for this long fails with an error event.
    stream_idle_timeout: float = 600.0
    max_connections: int = 200
    # The gateway's own key for OpenAI-compatible channels (sent as `Authorization: Bearer`); None: `api_key`.
    openai_api_key: str | None = None
    # The gateway's own Gemini key (sent as `x-goog-api-key`); None: `api_key`.
    gemini_api_key: str | None = None
    # A base URL per protocol (anthropic | openai | gemini) that replaces `base_url` for that family's channels.
    family_urls: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Endpoint:
    """Where one call goes (made by the family adapter): the family (whose base URL it uses), the path, and the
    headers: the gateway's own key for that family and any the translation adds. The client's key is never
    among them."""

    family: str
    path: str
    headers: Mapping[str, str]


@dataclass(frozen=True)
class Reply:
    """A non-streaming 200: the body as it came, its headers, and the JSON object it holds."""

    content: bytes
    headers: Mapping[str, str]
    answer: dict[str, Any]

    @property
    def media_type(self) -> str:
        # Read only for an answer passed on as it came (most answers are translated).
        return self.headers.get("content-type", "application/json")


@dataclass(frozen=True)
class ErrorStyle:
    """How upstream failures reach the client (from the profile): translated into the gateway's envelope, or
    forwarded unchanged with HTML pages for connection failures and timeouts; and which statuses let the next
    channel be tried."""

    forward: bool = False
    fallback_statuses: frozenset[int] = field(default_factory=frozenset)
    canonical_json: bool = False
    wait_for_first_event: bool = False


class Upstream:
    def __init__(
        self,
        settings: UpstreamSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        style: ErrorStyle | None = None,
    ) -> None:
        self._settings = settings
        self._style = style or ErrorStyle()
        self._dumps: Callable[[Any], str] = canonical_dumps if self._style.canonical_json else compact_dumps
        if transport is None:
            # aiohttp under httpx's interface (see netio); it sets TCP_NODELAY on its connections, so a
            # request's body never waits for the peer's delayed ACK.
            transport = netio.AiohttpTransport(max_connections=settings.max_connections)
        self._transport = transport
        self._client = httpx.AsyncClient(
            base_url=settings.base_url.rstrip("/"),
            headers={"content-type": "application/json"},
            transport=transport,
            timeout=httpx.Timeout(settings.request_timeout, connect=settings.connect_timeout),
            trust_env=False,
        )
        self._urls: dict[str, httpx.URL] = {}
        self._timeout = self._client.timeout.as_dict()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _roundtrip(self, request: httpx.Request, *, stream: bool) -> httpx.Response:
        """One call on the transport itself. The client's layers around it (auth, redirects, event hooks, the
        cookie jar) are not used by these calls, and cost about 100 µs each; without the jar an upstream's
        cookies are not sent again on other clients' calls."""
        response = await self._transport.handle_async_request(request)
        response.request = request
        if not stream:
            try:
                await response.aread()
            finally:
                await response.aclose()
        return response

    def _request(self, endpoint: Endpoint, body: Mapping[str, Any], request_id: str) -> httpx.Request:
        headers = {**endpoint.headers, "x-gateway-request-id": request_id}
        family = self._settings.family_urls.get(endpoint.family)
        url = family.rstrip("/") + endpoint.path if family else endpoint.path
        try:
            # Strict: no NaN or infinity (allow_nan=False) and valid UTF-8 (a lone surrogate fails to encode).
            content = self._dumps(body).encode("utf-8")
        except ValueError as exc:
            raise invalid_request(
                "The request holds a value that cannot be sent as JSON (NaN, infinity or a lone surrogate)."
            ) from exc
        # The client's own `build_request`, less what these calls never need: parsing and merging the same
        # URL again on every call (cached per URL), query parameters and the (always empty) cookie jar.
        target = self._urls.get(url)
        if target is None:
            target = self._urls[url] = self._client.build_request("POST", url).url
        merged = self._client.headers.copy()
        merged.update(headers)
        return httpx.Request(
            "POST", target, content=content, headers=merged, extensions={"timeout": self._timeout}
        )

    # ------------------------------------------------------------------------------------ error boundary

    def _status_error(
        self, request: httpx.Request, status: int, content: bytes, headers: Mapping[str, str], model: str
    ) -> GatewayError:
        _noted(request, status)
        retryable = status in self._style.fallback_statuses
        if self._style.forward:
            return forwarded(status, content, headers, retryable=retryable)
        error = from_upstream_body(status, content, headers=headers, model=model)
        error.retryable = retryable
        return error

    def _unreachable(self) -> GatewayError:
        if self._style.forward:
            return html_page(500, "Internal Server Error", "Could not reach the upstream provider.")
        error = server_error("Could not reach the upstream provider.")
        error.retryable = True
        return error

    def _timed_out(self, error: GatewayError) -> GatewayError:
        if self._style.forward:
            return html_page(504, "Gateway Time-out", error.message)
        error.retryable = True
        return error

    # ------------------------------------------------------------------------------------ calls

    async def call(
        self, endpoint: Endpoint, body: Mapping[str, Any], *, request_id: str, model: str
    ) -> Reply:
        """One non-streaming call. Raises `GatewayError`; the whole call is bounded by `request_timeout`. A 200
        that is not a JSON object is a 502; whether it is the family's answer is the adapter's to judge."""
        limit = self._settings.request_timeout
        request = self._request(endpoint, body, request_id)
        try:
            response = await _within(limit, self._roundtrip(request, stream=False))
        except (asyncio.TimeoutError, httpx.TimeoutException) as exc:
            raise self._timed_out(timeout(limit)) from exc
        except httpx.HTTPError as exc:
            raise self._unreachable() from exc
        if response.status_code != 200:
            raise self._status_error(
                request, response.status_code, response.content[:_MAX_ERROR_BODY], response.headers, model
            )
        return Reply(response.content, response.headers, _json_answer(response.content))

    @asynccontextmanager
    async def stream(
        self, endpoint: Endpoint, body: Mapping[str, Any], *, request_id: str, model: str
    ) -> AsyncIterator[AsyncIterator[Mapping[str, Any]]]:
        """Open a streaming call whose events are JSON objects. Errors before the stream starts raise
        `GatewayError` on entry; the yielded iterator gives decoded events and raises `GatewayError` for a failure
        mid-stream. Leaving the block closes the upstream connection at once (a client that went away stops the
        upstream request)."""
        async with self.stream_raw(endpoint, body, request_id=request_id, model=model) as events:
            yield DecodedEvents(events)

    @asynccontextmanager
    async def stream_raw(
        self, endpoint: Endpoint, body: Mapping[str, Any], *, request_id: str, model: str
    ) -> AsyncIterator[SSEEvents]:
        """`stream`, yielding the SSE events undecoded (for answers that are passed through)."""
        read = self._settings.stream_idle_timeout
        request = self._request(endpoint, body, request_id)
        request.extensions["timeout"] = httpx.Timeout(read, connect=self._settings.connect_timeout).as_dict()
        try:
            response = await self._roundtrip(request, stream=True)
        except httpx.TimeoutException as exc:
            raise self._timed_out(
                GatewayError(
                    504,
                    "The upstream provider did not start the stream in time.",
                    type="server_error",
                    code="timeout",
                )
            ) from exc
        except httpx.HTTPError as exc:
            raise self._unreachable() from exc
        try:
            if response.status_code != 200:
                content = await _read_limited(response)
                raise self._status_error(request, response.status_code, content, response.headers, model)
            events = SSEEvents(response)
            if not self._style.wait_for_first_event:
                yield events
                return
            try:
                first = await events.__anext__()
            except StopAsyncIteration as exc:
                raise self._unreachable() from exc
            except GatewayError as exc:
                raise (self._timed_out(exc) if exc.status == 504 else self._unreachable()) from exc
            events.unread(first)
            yield events
        finally:
            await response.aclose()

    # ------------------------------------------------------------------------------------ pass-through

    @asynccontextmanager
    async def passthrough(
        self, endpoint: Endpoint, content: bytes, *, query: str, request_id: str, stream: bool
    ) -> AsyncIterator[httpx.Response]:
        """One call whose body is the client's bytes, sent as they came, and whose answer, of any status, is
        the caller's to pass on (read for a non-stream, open for a stream). Raises `GatewayError` only when
        there is no answer (unreachable, timed out)."""
        headers = {**endpoint.headers, "x-gateway-request-id": request_id}
        family = self._settings.family_urls.get(endpoint.family)
        url = (family.rstrip("/") + endpoint.path if family else endpoint.path) + (
            f"?{query}" if query else ""
        )
        merged = self._client.headers.copy()
        merged.update(headers)
        if stream:
            limits = httpx.Timeout(self._settings.stream_idle_timeout, connect=self._settings.connect_timeout)
        else:
            limits = self._client.timeout
        request = httpx.Request(
            "POST",
            self._client.build_request("POST", url).url,
            content=content,
            headers=merged,
            extensions={"timeout": limits.as_dict()},
        )
        try:
            if stream:
                response = await self._roundtrip(request, stream=True)
            else:
                response = await _within(
                    self._settings.request_timeout, self._roundtrip(request, stream=False)
                )
        except (asyncio.TimeoutError, httpx.TimeoutException) as exc:
            raise self._timed_out(timeout(self._settings.request_timeout)) from exc
        except httpx.HTTPError as exc:
            raise self._unreachable() from exc
        if response.status_code >= 400:
            _noted(request, response.status_code)
        try:
            yield response
        finally:
            await response.aclose()


def _noted(request: httpx.Request, status: int) -> None:
    """The provider's error status, for the operator's log line (its body is not kept: it may quote the
    request)."""
    url = request.url
    note_upstream_status(status, f"{url.host}:{url.port}" if url.port else url.host, url.path)


async def _within(limit: float, call: Awaitable[T]) -> T:
    """`asyncio.wait_for(call, limit)`: the same TimeoutError, without a task per call where Python has
    `asyncio.timeout` (3.11)."""
    if _timeout is None:  # pragma: no cover - Python 3.10
        return await asyncio.wait_for(call, limit)
    async with _timeout(limit):
        return await call


_timeout = getattr(asyncio, "timeout", None)


def _json_answer(content: bytes) -> dict[str, Any]:
    try:
        answer = json.loads(content)
    except ValueError as exc:
        raise bad_upstream_answer("JSON") from exc
    if not isinstance(answer, dict):
        raise bad_upstream_answer("a JSON object")
    return answer


async def _read_limited(response: httpx.Response) -> bytes:
    content = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            content += chunk
            if len(content) >= _MAX_ERROR_BODY:
                break
    except httpx.HTTPError:
        pass
    return bytes(content)


class SSEEvents:
    """The SSE events of a streaming response, as an async iterator; `drain()` takes the events already read
    with the last one (one upstream read often holds many), without I/O, so that the SSE loop handles them
    without a task and a loop turn per event. A failure of the connection is a `GatewayError`."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks = response.aiter_bytes()
        self._decoder = SSEDecoder()
        self._ready: deque[ServerSentEvent] = deque()

    def __aiter__(self) -> SSEEvents:
        return self

    async def __anext__(self) -> ServerSentEvent:
        while not self._ready:
            try:
                chunk = await self._chunks.__anext__()
            except httpx.TimeoutException as exc:
                raise GatewayError(
                    504,
                    "The upstream provider stopped sending the stream.",
                    type="server_error",
                    code="timeout",
                ) from exc
            except httpx.HTTPError as exc:
                raise server_error("The connection to the upstream provider was lost.") from exc
            self._ready.extend(self._decoder.feed(chunk))
        return self._ready.popleft()

    def drain(self, limit: int) -> list[ServerSentEvent]:
        """Up to `limit` events already decoded (none needs a read)."""
        ready = self._ready
        return [ready.popleft() for _ in range(min(limit, len(ready)))]

    def unread(self, event: ServerSentEvent) -> None:
        """Put an event read ahead back in front (LYRouter reads the first before the stream is served)."""
        self._ready.appendleft(event)


class DecodedEvents:
    """`SSEEvents` whose events are decoded JSON objects (other JSON values are skipped); a malformed event is
    a `GatewayError`, raised in its turn (after the events before it, `drain` included)."""

    def __init__(self, events: SSEEvents) -> None:
        self._events = events

    def __aiter__(self) -> DecodedEvents:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while True:
            event = _decode(await self._events.__anext__())
            if isinstance(event, dict):
                return event

    def drain(self, limit: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for sse in self._events.drain(limit):
            try:
                event = _decode(sse)
            except GatewayError:
                self._events.unread(sse)  # `__anext__` raises it in its turn
                break
            if isinstance(event, dict):
                out.append(event)
        return out


def _decode(sse: ServerSentEvent) -> Any:
    try:
        return fastjson.loads(sse.data)  # once per upstream event: the hot path of a stream
    except ValueError as exc:
        raise server_error("The upstream provider sent a malformed stream event.") from exc
