"""The only module that talks to the provider: one pooled `httpx.AsyncClient` for Anthropic's Messages API.

Every httpx failure and every non-2xx answer becomes a `GatewayError` here, through `errors.from_upstream`.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from reference_gateway.errors import (
    GatewayError,
    from_upstream,
    from_upstream_body,
    server_error,
    timeout,
)
from reference_gateway.translate.stream import SSEDecoder

_MAX_ERROR_BODY = 64 * 1024


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


class Upstream:
    def __init__(
        self, settings: UpstreamSettings, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._settings = settings
        headers = {"anthropic-version": settings.anthropic_version, "content-type": "application/json"}
        if settings.api_key:
            headers["x-api-key"] = settings.api_key
        if transport is None:
            # TCP_NODELAY: httpx writes the headers and the body separately; with Nagle's algorithm the body
            # would wait for the peer's delayed ACK (~40 ms on Linux) on every call.
            transport = httpx.AsyncHTTPTransport(
                limits=httpx.Limits(max_connections=settings.max_connections, max_keepalive_connections=50),
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
            )
        self._client = httpx.AsyncClient(
            base_url=settings.base_url.rstrip("/"),
            headers=headers,
            transport=transport,
            timeout=httpx.Timeout(settings.request_timeout, connect=settings.connect_timeout),
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def _request(self, body: Mapping[str, Any], request_id: str) -> httpx.Request:
        # The client's key is never forwarded: only the gateway's own upstream key (set on the client) goes out.
        return self._client.build_request(
            "POST",
            "/v1/messages",
            content=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(),
            headers={"x-gateway-request-id": request_id},
        )

    async def create(self, body: Mapping[str, Any], *, request_id: str, model: str) -> Mapping[str, Any]:
        """One non-streaming call. Raises `GatewayError`; the whole call is bounded by `request_timeout`."""
        limit = self._settings.request_timeout
        try:
            response = await asyncio.wait_for(self._client.send(self._request(body, request_id)), limit)
        except (asyncio.TimeoutError, httpx.TimeoutException) as exc:
            raise timeout(limit) from exc
        except httpx.HTTPError as exc:
            raise server_error("Could not reach the upstream provider.") from exc
        if response.status_code != 200:
            raise from_upstream_body(
                response.status_code,
                response.content[:_MAX_ERROR_BODY],
                headers=response.headers,
                model=model,
            )
        try:
            message = response.json()
        except ValueError as exc:
            raise server_error("The upstream provider sent an answer that is not JSON.") from exc
        if not isinstance(message, dict):
            raise server_error("The upstream provider sent an unexpected answer.")
        if message.get("type") == "error":
            # A 200 whose body is an error envelope is still an error.
            error = message.get("error")
            raise from_upstream(None, error if isinstance(error, dict) else {}, model=model)
        return message

    @asynccontextmanager
    async def stream(
        self, body: Mapping[str, Any], *, request_id: str, model: str
    ) -> AsyncIterator[AsyncIterator[Mapping[str, Any]]]:
        """Open a streaming call. Errors before the stream starts raise `GatewayError` on entry; the yielded
        iterator gives decoded events and raises `GatewayError` for a failure mid-stream. Leaving the block
        closes the upstream connection at once (a client that went away stops the upstream request)."""
        read = self._settings.stream_idle_timeout
        request = self._request(body, request_id)
        request.extensions["timeout"] = httpx.Timeout(read, connect=self._settings.connect_timeout).as_dict()
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise GatewayError(
                504, "The upstream provider did not start the stream in time.", type="server_error", code="timeout"
            ) from exc
        except httpx.HTTPError as exc:
            raise server_error("Could not reach the upstream provider.") from exc
        try:
            if response.status_code != 200:
                content = await _read_limited(response)
                raise from_upstream_body(response.status_code, content, headers=response.headers, model=model)
            yield _events(response)
        finally:
            await response.aclose()


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


async def _events(response: httpx.Response) -> AsyncIterator[Mapping[str, Any]]:
    decoder = SSEDecoder()
    try:
        async for chunk in response.aiter_bytes():
            for sse in decoder.feed(chunk):
                try:
                    event = json.loads(sse.data)
                except ValueError as exc:
                    raise server_error("The upstream provider sent a malformed stream event.") from exc
                if isinstance(event, dict):
                    yield event
    except httpx.TimeoutException as exc:
        raise GatewayError(
            504, "The upstream provider stopped sending the stream.", type="server_error", code="timeout"
        ) from exc
    except httpx.HTTPError as exc:
        raise server_error("The connection to the upstream provider was lost.") from exc
