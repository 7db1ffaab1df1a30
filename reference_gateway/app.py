"""The thin Starlette app: parse → route → translate → upstream → translate → respond.

Every response carries the gateway's `request-id`; errors are OpenAI's envelope unless the profile says
otherwise; streams are translated (or passed through) event by event as they arrive, with `: ping` comments
while the upstream is quiet. A model's channels are tried in order until one answers or starts streaming.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse as StarletteJSONResponse
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_gateway import errors, fastjson
from reference_gateway.auth import KeyRing
from reference_gateway.body import BodyError, parse_json
from reference_gateway.channels import requested_model, resolve
from reference_gateway.errors import GatewayError
from reference_gateway.images import AllowList, ImageFetcher, ImageLimits, Resolver
from reference_gateway.models import Catalog, Channel, ModelInfo
from reference_gateway.policy import Profile
from reference_gateway.translate.openai_passthrough import PassthroughStream, chat_to_openai
from reference_gateway.translate.request import RequestOptions, Translated, chat_to_anthropic
from reference_gateway.translate.response import message_to_chat
from reference_gateway.translate.stream import PING, StreamContext, StreamTranslator, encode
from reference_gateway.upstream import ErrorStyle, Upstream, UpstreamSettings

logger = logging.getLogger("reference_gateway")

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape_controls(record: logging.LogRecord) -> bool:
    """The one place log lines are made safe: control characters (and lone surrogates) in anything a line
    quotes, e.g. a percent-decoded path, are written as escapes, so no client can forge a log line."""
    text = record.getMessage()
    if _CONTROL.search(text):
        record.msg, record.args = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text), None
    return True


logger.addFilter(_escape_controls)

MB = 1024 * 1024
_BATCH = 64  # upstream events whose chunks may share one write to the client (see Gateway._sse)


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
    # LYRouter: the workspace's Default Model, used when `model` is omitted, "" or null.
    default_model: str | None = None
    # Relay: the idempotency store and response cache (`sqlite:///FILE` or `redis://…`); None keeps no state.
    state_url: str | None = None
    # Relay: Gateway:Cache:TtlSeconds; 0 leaves the response cache off.
    cache_ttl_seconds: float = 0.0
    # Relay: Gateway:MaxImageBytes; None keeps the profile's default (5 MB).
    max_image_bytes: int | None = None
    # A reading (the docs are silent): request headers over 64 KB in all are a 431 envelope.
    max_header_bytes: int = 64 * 1024


@dataclass(frozen=True)
class Hooks:
    """Seams for tests and benchmarks: transports, the DNS resolver, the clock and the request-id factory."""

    upstream_transport: httpx.AsyncBaseTransport | None = None
    image_transport: httpx.AsyncBaseTransport | None = None
    resolver: Resolver | None = None
    clock: Callable[[], float] = time.time
    new_request_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)


class JSONResponse(StarletteJSONResponse):
    """Starlette's JSON response, encoded by orjson: the same bytes for the gateway's answers, faster."""

    def render(self, content: Any) -> bytes:
        return fastjson.dumps(content)


def error_response(error: GatewayError) -> Response:
    if error.raw is not None:
        return Response(
            error.raw.content,
            status_code=error.status,
            headers=dict(error.headers),
            media_type=error.raw.media_type,
        )
    return JSONResponse(error.to_envelope(), status_code=error.status, headers=dict(error.headers))


class StreamPump(Protocol):
    """What the SSE loop drives: upstream events in, bytes for the client out."""

    @property
    def finished(self) -> bool: ...

    def feed(self, event: Any) -> list[bytes]: ...

    def fail(self, error: GatewayError) -> list[bytes]: ...

    def end_of_stream(self) -> list[bytes]: ...


class TranslatingPump:
    """A `StreamTranslator` (Anthropic events → chunks) with its items encoded as SSE bytes."""

    def __init__(self, translator: StreamTranslator) -> None:
        self._translator = translator

    @property
    def finished(self) -> bool:
        return self._translator.finished

    def feed(self, event: Any) -> list[bytes]:
        return [encode(item) for item in self._translator.feed(event)]

    def fail(self, error: GatewayError) -> list[bytes]:
        return [encode(item) for item in self._translator.fail(error)]

    def end_of_stream(self) -> list[bytes]:
        return [encode(item) for item in self._translator.end_of_stream()]


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
        self._relay: Any = None
        if settings.profile.relay is not None:
            from reference_gateway.relay import RelayFlow  # imports this module

            self._relay = RelayFlow(self, settings.profile.relay)

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Starlette) -> AsyncIterator[None]:
        profile = self.settings.profile
        style = ErrorStyle(
            forward=profile.upstream_errors == "forward",
            fallback_statuses=profile.fallback_statuses,
            canonical_json=profile.canonical_json,
            wait_for_first_event=profile.wait_for_first_event,
        )
        self._upstream = Upstream(
            self.settings.upstream, transport=self.hooks.upstream_transport, style=style
        )
        self._images = ImageFetcher(
            limits=self.settings.image_limits,
            allow=self.settings.image_allow,
            resolver=self.hooks.resolver,
            transport=self.hooks.image_transport,
        )
        if self._relay is not None:
            await self._relay.start()
        try:
            yield
        finally:
            await self._upstream.aclose()
            await self._images.aclose()
            if self._relay is not None:
                await self._relay.aclose()

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
        limit = self.settings.max_header_bytes
        if sum(len(name) + len(value) + 4 for name, value in request.scope["headers"]) > limit:
            raise errors.headers_too_large(limit)
        if self.settings.keys is not None:
            policy = self.settings.profile.requests
            failure = self.settings.keys.check(
                request.headers,
                bearer_case_sensitive=policy.bearer_case_sensitive,
                authorization_only=policy.authorization_only,
            )
            if failure is not None:
                raise failure

    def _check_content_type(self, request: Request) -> None:
        # LYRouter: without Content-Type the body is parsed as JSON; any other value is a plain-text 400.
        template = self.settings.profile.requests.unsupported_content_type
        value = request.headers.get("content-type", "").strip()
        if template is not None and value and value.split(";")[0].strip().lower() != "application/json":
            raise errors.plain_text(
                400, template.format(value=errors.echo(value)), media_type="application/json"
            )

    def _parse_body(self, raw: bytes) -> dict[str, Any]:
        policy = self.settings.profile.requests
        flat = policy.invalid_json_with_default if self.settings.default_model is not None else None
        try:
            body = parse_json(raw)
        except BodyError as exc:
            if flat is not None:
                # The parser's message says where parsing stopped; it quotes no request text.
                raise errors.flat_message(400, flat.format(error=exc.problem)) from exc
            if exc.kind == "limit":
                raise errors.with_problem(policy.invalid_json.error(), exc.problem) from exc
            raise policy.invalid_json.error() from exc
        if not isinstance(body, dict):
            if flat is not None:
                raise errors.flat_message(
                    400, flat.format(error=f"the top level is {_json_kind(body)}, not an object")
                )
            raise policy.not_an_object.error()
        return body

    # ----------------------------------------------------------------------------------------- endpoints

    async def chat_completions(self, request: Request) -> Response:
        # A GatewayError raised here is answered by the app's exception handler; anything else by
        # `UnexpectedErrors`.
        profile = self.settings.profile
        if self._relay is not None:
            response: Response = await self._relay.chat_completions(request)
            return response
        self._authenticate(request)
        self._check_content_type(request)
        body = self._parse_body(await _read_body(request, self.settings.max_body_bytes))
        name = requested_model(body, self.settings.default_model, profile)
        model = resolve(self.settings.catalog, name, profile)
        failure: GatewayError | None = None
        for channel in model.channels:
            try:
                if channel.protocol == "anthropic":
                    return await self._via_anthropic(body, model, name, channel, request)
                return await self._via_openai(body, model, name, channel, request)
            except GatewayError as error:
                # LYRouter: "moves to the next channel on failure" (before any byte reached the client).
                if not error.retryable:
                    raise
                failure = error
        raise failure or errors.server_error()

    async def _via_anthropic(
        self, body: Mapping[str, Any], model: ModelInfo, name: str, channel: Channel, request: Request
    ) -> Response:
        request_id: str = request.state.request_id
        translated = await self._translate(body, replace(model, upstream=channel.upstream), request)
        completion_id = f"chatcmpl-{request_id}"
        created = int(self.hooks.clock())
        if translated.stream:
            context = StreamContext(
                completion_id, created, name, translated.include_usage, self.settings.profile
            )
            opened = self.upstream.stream(
                translated.body,
                request_id=request_id,
                model=name,
                channel=channel,
                extra_headers=translated.headers,
            )
            return await self._sse(opened, TranslatingPump(StreamTranslator(context)), request_id)
        message = await _unless_disconnected(
            request,
            self.upstream.create(
                translated.body,
                request_id=request_id,
                model=name,
                channel=channel,
                extra_headers=translated.headers,
            ),
        )
        if message is None:
            return Response(status_code=499)  # nobody is listening any more
        completion = message_to_chat(
            message, completion_id=completion_id, created=created, model=name, profile=self.settings.profile
        )
        return JSONResponse(completion)

    async def _via_openai(
        self, body: Mapping[str, Any], model: ModelInfo, name: str, channel: Channel, request: Request
    ) -> Response:
        request_id: str = request.state.request_id
        profile = self.settings.profile
        passthrough = chat_to_openai(body, profile=profile, model=model, channel=channel)
        if passthrough.stream:
            opened = self.upstream.stream_raw(
                passthrough.body, request_id=request_id, model=name, channel=channel
            )
            return await self._sse(opened, PassthroughStream(profile), request_id)
        answer = await _unless_disconnected(
            request,
            self.upstream.create_raw(passthrough.body, request_id=request_id, model=name, channel=channel),
        )
        if answer is None:
            return Response(status_code=499)
        content, media_type = answer
        # LYRouter: the answer, usage, id and model are the upstream's.
        return Response(content, media_type=media_type)

    async def _translate(self, body: Mapping[str, Any], model: ModelInfo, request: Request) -> Translated:
        profile = self.settings.profile
        cache_header = (
            request.headers.get(profile.cache_off_header or "", "") if profile.cache_off_header else ""
        )
        session = request.headers.get(profile.session_header) if profile.session_header else None
        forwarded = {
            name: request.headers[name]
            for name in profile.anthropic.forwarded_headers
            if name in request.headers
        }
        options = RequestOptions(
            cache_off=cache_header.strip().lower() == "off",
            session_header=session or None,
            client_headers=forwarded,
        )
        translated = chat_to_anthropic(body, profile=profile, model=model, options=options)
        if translated.remote_images:
            fetched = await self.images.fetch_all(translated.remote_images)
            translated = chat_to_anthropic(
                body, profile=profile, model=model, options=options, images=fetched
            )
        return translated

    async def _sse(self, opened: Any, pump: StreamPump, request_id: str) -> Response:
        # Errors before the upstream stream starts are still proper HTTP errors (raised from __aenter__), and
        # the next channel may still be tried; from here on the client owns the stream.
        events = await opened.__aenter__()
        ping_interval = self.settings.ping_interval

        async def body() -> AsyncIterator[bytes]:
            loop = asyncio.get_running_loop()
            iterator = events.__aiter__()
            pending: asyncio.Future[Any] | None = None
            last_write = loop.time()
            try:
                while not pump.finished:
                    if pending is None:
                        pending = asyncio.ensure_future(iterator.__anext__())
                    wait = max(0.0, last_write + ping_interval - loop.time())
                    done, _ = await asyncio.wait({pending}, timeout=wait)
                    if not done:
                        # EZAT: "During long pauses EZAT sends `: ping` comment lines".
                        last_write = loop.time()
                        yield PING
                        continue
                    # The events already read with this one (one upstream read often holds many) are handled
                    # before writing, so that they go out in one write: the next event is given one turn of the
                    # loop, which finishes it only if it needs no more I/O. Nothing waits for more data, and a
                    # write holds at most _BATCH events' chunks.
                    out: list[bytes] = []
                    for _ in range(_BATCH):
                        task, pending = pending, None
                        out += _pump_step(pump, task, request_id)
                        if pump.finished:
                            break
                        pending = asyncio.ensure_future(iterator.__anext__())
                        await asyncio.sleep(0)
                        if not pending.done():
                            break
                    if out:
                        last_write = loop.time()
                        yield b"".join(out)
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
        self._authenticate(request)
        data: list[dict[str, Any]] = [
            {
                "id": m.id,
                "object": "model",
                "created": m.created,
                "owned_by": m.channels[0].provider if m.channels else "anthropic",
            }
            for m in self.settings.catalog.models.values()
        ]
        if self.settings.profile.relay is not None:
            # Relay: "Check capabilities.vision on GET /v1/models before sending images to a model".
            for entry, m in zip(data, self.settings.catalog.models.values(), strict=True):
                entry["capabilities"] = {"vision": m.vision}
        return JSONResponse({"object": "list", "data": data})

    async def model_capabilities(self, _request: Request) -> Response:
        data = [
            {"id": m.id, "upstream_model": m.upstream, "capabilities": m.capabilities()}
            for m in self.settings.catalog.models.values()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def healthz(self, _request: Request) -> Response:
        return JSONResponse({"status": "ok", "profile": self.settings.profile.name})


def _pump_step(pump: StreamPump, task: asyncio.Future[Any], request_id: str) -> list[bytes]:
    """The client's bytes for one finished read of the upstream stream: an event, its end or its failure."""
    try:
        return pump.feed(task.result())
    except StopAsyncIteration:
        return pump.end_of_stream()
    except GatewayError as error:
        return pump.fail(error)
    except Exception as exc:
        _log_unexpected(request_id, exc)
        return pump.fail(errors.server_error())


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


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
        # `cancel()` only asks: until the cancellation has landed the task has no result (reading one raised
        # InvalidStateError, a 500), so wait for both before looking.
        await asyncio.gather(watch, work, return_exceptions=True)
    if work.cancelled():
        return None
    return work.result()


def _log_unexpected(request_id: str, exc: BaseException) -> None:
    # The type and the request id only: an exception's text (and its traceback's locals) may quote the body
    # or a key.
    logger.error("%s unexpected %s", request_id, type(exc).__name__)


class UnexpectedErrors:
    """The one layer for exceptions nothing else answered: the 500 envelope (if no response has started) and a
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
            _log_unexpected(scope.get("state", {}).get("request_id", "-"), exc)
            if not started:
                await error_response(errors.server_error())(scope, receive, send)


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

    async def gateway_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GatewayError)
        return error_response(exc)

    async def http_error(request: Request, exc: Exception) -> Response:
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

    # Starlette always wraps the app in its ServerErrorMiddleware (which re-raises), so the catch-all sits just
    # inside it, outside everything that can raise; the request-id layer outside Starlette never raises and
    # stamps the id on the 500 too.
    app = Starlette(
        routes=routes,
        middleware=[Middleware(UnexpectedErrors)],
        lifespan=gateway.lifespan,
        exception_handlers={GatewayError: gateway_error, HTTPException: http_error},
    )
    if settings.profile.relay is not None:
        from reference_gateway.observability import ObservabilityMiddleware

        return RequestIdMiddleware(
            ObservabilityMiddleware(app, settings.profile.relay, hooks.new_request_id), hooks.new_request_id
        )
    return RequestIdMiddleware(app, hooks.new_request_id)
