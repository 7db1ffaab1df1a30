"""The ASGI layers around the routes: the request id (and the one log line per request), and the one error
layer — `GatewayError` as the profile's envelope, Starlette's 404/405 as envelopes, and every other exception
as a 500 whose log line names only its type."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_gateway import errors
from reference_gateway.errors import GatewayError
from reference_gateway.web.logs import log_unexpected, logger
from reference_gateway.web.responses import error_response


class RequestIdMiddleware:
    """Gives each request an id, sends it as `request-id` (and `x-request-id`, which the OpenAI SDK reads) on
    every response, and logs one line per request: no bodies, no keys."""

    def __init__(self, app: ASGIApp, new_id: Callable[[], str]) -> None:
        self.app = app
        self.new_id = new_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self.new_id()
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.monotonic()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", []), (b"request-id", request_id.encode())]
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            logger.info(
                "%s %s %s %d %.0fms",
                request_id,
                scope.get("method", ""),
                scope.get("path", ""),
                status,
                (time.monotonic() - started) * 1000,
            )


class UnexpectedErrors:
    """The layer for exceptions nothing else answered: the 500 envelope (if no response has started) and a
    log line with the exception type and request id only. It never re-raises, so neither uvicorn nor
    Starlette's `ServerErrorMiddleware` gets to log the exception's text or drop the keep-alive connection."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            log_unexpected(scope.get("state", {}).get("request_id", "-"), exc)
            if not started:
                await error_response(errors.server_error())(scope, receive, send)


async def _gateway_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        return error_response(errors.not_found(request.url.path))
    if status == 405:
        return error_response(
            GatewayError(
                405,
                f"{request.method} is not allowed on {errors.echo(request.url.path)}.",
                type="invalid_request_error",
            )
        )
    return error_response(errors.server_error())


EXCEPTION_HANDLERS: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    GatewayError: _gateway_error,
    HTTPException: _http_error,
}
