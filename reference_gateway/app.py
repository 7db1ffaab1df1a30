"""The thin Starlette app: parse → translate → upstream → translate → respond.

Every response carries the gateway's `request-id`; every error is OpenAI's envelope; streams are translated
event by event as they arrive, with `: ping` comments while the upstream is quiet.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_gateway import errors
from reference_gateway.auth import KeyRing
from reference_gateway.errors import GatewayError
from reference_gateway.images import AllowList, ImageFetcher, ImageLimits, Resolver
from reference_gateway.models import Catalog, ModelInfo
from reference_gateway.profiles import Profile
from reference_gateway.translate.request import RequestOptions, Translated, chat_to_anthropic
from reference_gateway.translate.response import message_to_chat
from reference_gateway.translate.stream import PING, StreamContext, StreamTranslator, encode
from reference_gateway.upstream import Upstream, UpstreamSettings

logger = logging.getLogger("reference_gateway")

MB = 1024 * 1024


@dataclass(frozen=True)
class GatewaySettings:
    profile: Profile
    catalog: Catalog
    upstream: UpstreamSettings
    keys: KeyRing | None  # None: authentication switched off (`--no-auth`)
    ping_interval: float = 10.0
    # EZAT: "The whole request body can be up to 32 MB."
    max_body_bytes: int = 32 * MB
    image_limits: ImageLimits = field(default_factory=ImageLimits)
    image_allow: AllowList = field(default_factory=AllowList)


@dataclass(frozen=True)
class Hooks:
    """Seams for tests and benchmarks: transports, the DNS resolver, the clock and the request-id factory."""

    upstream_transport: httpx.AsyncBaseTransport | None = None
    image_transport: httpx.AsyncBaseTransport | None = None
    resolver: Resolver | None = None
    clock: Callable[[], float] = time.time
    new_request_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)


def error_response(error: GatewayError) -> JSONResponse:
    return JSONResponse(error.to_envelope(), status_code=error.status, headers=dict(error.headers))


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


class EventStreamResponse(StreamingResponse):
    """SSE response that watches for the client going away and then stops the body at once (its `finally`
    closes the upstream request), instead of noticing only at the next failed write."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        pump = asyncio.ensure_future(self._pump(send))
        watch = asyncio.ensure_future(_until_disconnect(receive))
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


async def _until_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` (never buffered beyond it). The rest is drained,
    up to a bound, so that the client gets to read the 413 instead of a reset connection."""
    declared = request.headers.get("content-length", "")
    too_large = declared.isdigit() and int(declared) > limit
    body = bytearray()
    drained = 0
    async for chunk in request.stream():
        if too_large:
            drained += len(chunk)
            if drained > 4 * limit:
                break
            continue
        body += chunk
        if len(body) > limit:
            too_large, drained = True, len(body)
            body = bytearray()
    if too_large:
        raise errors.request_too_large(limit)
    return bytes(body)


class Gateway:
    """The endpoints, bound to one configuration and its upstream clients."""

    def __init__(self, settings: GatewaySettings, hooks: Hooks) -> None:
        self.settings = settings
        self.hooks = hooks
        self._upstream: Upstream | None = None
        self._images: ImageFetcher | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        self._upstream = Upstream(self.settings.upstream, transport=self.hooks.upstream_transport)
        self._images = ImageFetcher(
            limits=self.settings.image_limits,
            allow=self.settings.image_allow,
            resolver=self.hooks.resolver,
            transport=self.hooks.image_transport,
        )
        try:
            yield
        finally:
            await self._upstream.aclose()
            await self._images.aclose()

    @property
    def upstream(self) -> Upstream:
        if self._upstream is None:
            raise RuntimeError("the gateway is not started (lifespan not run)")
        return self._upstream

    @property
    def images(self) -> ImageFetcher:
        if self._images is None:
            raise RuntimeError("the gateway is not started (lifespan not run)")
        return self._images

    def _authenticate(self, request: Request) -> None:
        if self.settings.keys is not None:
            failure = self.settings.keys.check(request.headers)
            if failure is not None:
                raise failure

    # ----------------------------------------------------------------------------------------- endpoints

    async def chat_completions(self, request: Request) -> Response:
        request_id: str = request.state.request_id
        try:
            self._authenticate(request)
            body = _parse_json(await _read_body(request, self.settings.max_body_bytes))
            model_name = body.get("model")
            if not isinstance(model_name, str) or not model_name:
                raise errors.invalid_request("model: is required", "model")
            model = self.settings.catalog.get(model_name)
            if model is None:
                raise errors.model_not_found(model_name)
            translated = await self._translate(body, model, request)
            completion_id = f"chatcmpl-{request_id}"
            created = int(self.hooks.clock())
            if translated.stream:
                context = StreamContext(
                    completion_id, created, model_name, translated.include_usage, self.settings.profile
                )
                return await self._stream(translated, context, request_id, model_name)
            message = await _unless_disconnected(
                request, self.upstream.create(translated.body, request_id=request_id, model=model_name)
            )
            if message is None:
                return Response(status_code=499)  # nobody is listening any more
            completion = message_to_chat(
                message,
                completion_id=completion_id,
                created=created,
                model=model_name,
                profile=self.settings.profile,
            )
            return JSONResponse(completion)
        except GatewayError as error:
            return error_response(error)
        except Exception as exc:
            _log_unexpected(request_id, exc)
            return error_response(errors.server_error())

    async def _translate(self, body: Mapping[str, Any], model: ModelInfo, request: Request) -> Translated:
        profile = self.settings.profile
        cache_header = (
            request.headers.get(profile.cache_off_header or "", "") if profile.cache_off_header else ""
        )
        session = request.headers.get(profile.session_header) if profile.session_header else None
        options = RequestOptions(
            cache_off=cache_header.strip().lower() == "off", session_header=session or None
        )
        translated = chat_to_anthropic(body, profile=profile, model=model, options=options)
        if translated.remote_images:
            fetched = await self.images.fetch_all(translated.remote_images)
            translated = chat_to_anthropic(
                body, profile=profile, model=model, options=options, images=fetched
            )
        return translated

    async def _stream(
        self, translated: Translated, context: StreamContext, request_id: str, model_name: str
    ) -> Response:
        opened = self.upstream.stream(translated.body, request_id=request_id, model=model_name)
        # Errors before the upstream stream starts are still proper HTTP errors (raised from __aenter__).
        events = await opened.__aenter__()
        translator = StreamTranslator(context)
        ping_interval = self.settings.ping_interval

        async def body() -> AsyncIterator[bytes]:
            loop = asyncio.get_running_loop()
            iterator = events.__aiter__()
            pending: asyncio.Future[Mapping[str, Any]] | None = None
            last_write = loop.time()
            try:
                while not translator.finished:
                    if pending is None:
                        pending = asyncio.ensure_future(iterator.__anext__())
                    wait = max(0.0, last_write + ping_interval - loop.time())
                    done, _ = await asyncio.wait({pending}, timeout=wait)
                    if not done:
                        # EZAT: "During long pauses EZAT sends `: ping` comment lines".
                        last_write = loop.time()
                        yield PING
                        continue
                    task, pending = pending, None
                    try:
                        items = translator.feed(task.result())
                    except StopAsyncIteration:
                        items = translator.end_of_stream()
                    except GatewayError as error:
                        items = translator.fail(error)
                    except Exception as exc:
                        _log_unexpected(request_id, exc)
                        items = translator.fail(errors.server_error())
                    if items:
                        last_write = loop.time()
                    for item in items:
                        yield encode(item)
            finally:
                if pending is not None:
                    pending.cancel()
                    await asyncio.gather(pending, return_exceptions=True)
                await opened.__aexit__(None, None, None)

        return EventStreamResponse(
            body(),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    async def list_models(self, request: Request) -> Response:
        try:
            self._authenticate(request)
        except GatewayError as error:
            return error_response(error)
        data = [
            {"id": m.id, "object": "model", "created": m.created, "owned_by": "anthropic"}
            for m in self.settings.catalog.models.values()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def model_capabilities(self, _request: Request) -> Response:
        data = [
            {"id": m.id, "upstream_model": m.upstream, "capabilities": m.capabilities()}
            for m in self.settings.catalog.models.values()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def healthz(self, _request: Request) -> Response:
        return JSONResponse({"status": "ok", "profile": self.settings.profile.name})


def _parse_json(raw: bytes) -> Mapping[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise errors.invalid_request("We could not parse the JSON body of your request.") from exc
    if not isinstance(body, dict):
        raise errors.invalid_request("The request body must be a JSON object.")
    return body


async def _unless_disconnected(request: Request, call: Any) -> Any:
    """Await `call`, but cancel it (closing the upstream request) if the client disconnects first."""
    work = asyncio.ensure_future(call)
    watch = asyncio.ensure_future(_until_disconnect(request.receive))
    try:
        await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not work.done():
            work.cancel()
        await asyncio.gather(watch, return_exceptions=True)
    if work.cancelled():
        await asyncio.gather(work, return_exceptions=True)
        return None
    return work.result()


def _log_unexpected(request_id: str, exc: BaseException) -> None:
    # The type and the stack only: an exception's text might quote request data.
    stack = "".join(traceback.format_tb(exc.__traceback__))
    logger.error("%s unexpected %s\n%s", request_id, type(exc).__name__, stack)


def create_app(settings: GatewaySettings, hooks: Hooks | None = None) -> ASGIApp:
    hooks = hooks or Hooks()
    gateway = Gateway(settings, hooks)
    routes = [
        Route("/healthz", gateway.healthz, methods=["GET"]),
        Route("/api/models", gateway.model_capabilities),
    ]
    for base in settings.profile.base_paths:
        routes.append(Route(f"{base}/chat/completions", gateway.chat_completions, methods=["POST"]))
        routes.append(Route(f"{base}/models", gateway.list_models, methods=["GET"]))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 404:
            return error_response(errors.not_found(request.url.path))
        if status == 405:
            return error_response(
                GatewayError(
                    405,
                    f"{request.method} is not allowed on {request.url.path}.",
                    type="invalid_request_error",
                )
            )
        return error_response(errors.server_error())

    async def unexpected(request: Request, exc: Exception) -> Response:
        _log_unexpected(getattr(request.state, "request_id", "-"), exc)
        return error_response(errors.server_error())

    app = Starlette(
        routes=routes,
        lifespan=gateway.lifespan,
        exception_handlers={HTTPException: http_error, Exception: unexpected},
    )
    return RequestIdMiddleware(app, hooks.new_request_id)
