"""The ASGI layers around the routes: the request id (with the access line per request, and the error line for
every error the gateway answers: its cause, from the request's `errors.Diagnosis`), and the one error layer —
`GatewayError` as the profile's envelope, Starlette's 404/405 as envelopes, and every other exception as a 500
whose log line names only its type and where it was raised."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_gateway import errors
from reference_gateway.errors import GatewayError, begin_diagnosis, note_answered, note_error
from reference_gateway.web.logs import error_fields, log_error, log_request
from reference_gateway.web.responses import error_response


class RequestIdMiddleware:
    """Gives each request an id, sends it as `request-id` (and `x-request-id`, which the OpenAI SDK reads) on
    every response, and logs one line per request, and one more for an error it answered (its cause): no
    bodies, no keys."""

    def __init__(self, app: ASGIApp, new_id: Callable[[], str]) -> None:
        self.app = app
        self.new_id = new_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = self.new_id()
        scope.setdefault("state", {})["request_id"] = request_id
        diagnosis = begin_diagnosis()
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
            seconds = time.monotonic() - started
            method, path = scope.get("method", ""), scope.get("path", "")
            log_request(request_id, method, path, status, seconds)
            fields = error_fields(request_id, method, path, status, seconds, diagnosis)
            if fields is not None:
                log_error(fields)


class UnexpectedErrors:
    """The layer for exceptions nothing else answered: the 500 envelope (if no response has started), the
    exception noted for the request's error line (its type and where it was raised only). It never re-raises, so
    neither uvicorn nor Starlette's `ServerErrorMiddleware` gets to log the exception's text or drop the
    keep-alive connection."""

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
            note_error(exc)
            answer = errors.server_error()
            note_error(answer)
            if not started:
                await error_response(answer)(scope, receive, send)


async def _gateway_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    note_error(exc)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        error = errors.not_found(request.url.path)
    elif status == 405:
        error = GatewayError(
            405,
            f"{request.method} is not allowed on {errors.echo(request.url.path)}.",
            type="invalid_request_error",
        )
    else:
        error = errors.server_error()
    note_answered(error.status, error.type, error.code, error.param)
    return error_response(error)


EXCEPTION_HANDLERS: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    GatewayError: _gateway_error,
    HTTPException: _http_error,
}
