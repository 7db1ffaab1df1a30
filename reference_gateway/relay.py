"""Profile `relay`'s request flow: one endpoint over three provider families (Anthropic, OpenAI-compatible,
Gemini), with transient retry and the model's fallback chain, the image limit before routing, the cost header,
the idempotency store and the response cache.

It reuses the gateway's pieces (authentication, body parsing, the upstream client, image downloads, the SSE
response) and the pure translators; what differs from the other profiles lives here and in translate/relay.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from reference_gateway import errors
from reference_gateway.app import EventStreamResponse, _log_unexpected, _read_body
from reference_gateway.channels import requested_model, resolve
from reference_gateway.errors import GatewayError
from reference_gateway.models import ModelInfo
from reference_gateway.policy import Relay
from reference_gateway.state import (
    Idempotency,
    ResponseCache,
    StateStore,
    StoredAnswer,
    body_fingerprint,
    digest,
    open_store,
)
from reference_gateway.translate.gemini_request import GeminiRequest, chat_to_gemini
from reference_gateway.translate.gemini_response import gemini_to_chat
from reference_gateway.translate.gemini_stream import GeminiStreamContext, GeminiStreamTranslator
from reference_gateway.translate.openai_passthrough import chat_to_openai
from reference_gateway.translate.relay import (
    ChunkSource,
    OpenAIChunks,
    RelayStream,
    anthropic_extras,
    asked_for_usage,
    check_images,
    cost_text,
    cost_usd,
    image_parts,
    openai_body,
    server_tools,
    web_search_report,
)
from reference_gateway.translate.response import message_to_chat
from reference_gateway.translate.stream import PING, StreamContext, StreamTranslator, encode

if TYPE_CHECKING:
    from reference_gateway.app import Gateway

logger = logging.getLogger("reference_gateway")


@dataclass(frozen=True)
class _Opened:
    """A provider stream opened for one model: its context manager and the chunks it becomes."""

    context: Any
    pump: RelayStream


class RelayFlow:
    def __init__(self, gateway: Gateway, relay: Relay) -> None:
        self.gateway = gateway
        self.relay = relay
        self._store: StateStore | None = None
        self._idempotency: Idempotency | None = None
        self._cache: ResponseCache | None = None

    # ------------------------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        settings = self.gateway.settings
        if settings.state_url is None:
            return
        self._store = open_store(settings.state_url, self.gateway.hooks.clock)
        wait = settings.upstream.request_timeout + 5
        self._idempotency = Idempotency(self._store, self.relay.idempotency_ttl_seconds, wait=wait)
        if settings.cache_ttl_seconds > 0:
            self._cache = ResponseCache(self._store, settings.cache_ttl_seconds)

    async def aclose(self) -> None:
        if self._store is not None:
            await self._store.aclose()

    # ------------------------------------------------------------------------------------ endpoint

    async def chat_completions(self, request: Request) -> Response:
        gateway = self.gateway
        settings = gateway.settings
        profile = settings.profile
        # Errors go to the app's one exception layer (GatewayError handler, unexpected-error middleware).
        gateway._authenticate(request)
        gateway._check_content_type(request)
        body = gateway._parse_body(await _read_body(request, settings.max_body_bytes))
        name = requested_model(body, settings.default_model, profile)
        # "refused before anything is routed or billed".
        check_images(body, settings.max_image_bytes or self.relay.max_image_bytes)
        model = resolve(settings.catalog, name, profile)
        images = image_parts(body)
        if images and not model.vision:
            path = images[0][0].removesuffix(".image_url.url")
            raise profile.requests.images_unsupported.error(path=path)
        chain = self._chain(model, bool(images))
        if body.get("stream") is True:
            return await self._stream(body, chain, request)
        return self._response(await self._non_streaming(body, chain, request))

    def _chain(self, model: ModelInfo, has_images: bool) -> list[ModelInfo]:
        """The model, then its fallback chain (models that cannot take the request's images are skipped)."""
        catalog = self.gateway.settings.catalog
        chain = [model]
        for fallback_id in model.fallbacks:
            fallback = catalog.get(fallback_id)
            if fallback is not None and fallback.channels and (fallback.vision or not has_images):
                chain.append(fallback)
        return chain

    async def _attempts(self, chain: list[ModelInfo], attempt: Any) -> Any:
        """Try each model of the chain, each `1 + transient_retries` times, while the failures are transient."""
        failure: GatewayError | None = None
        for model in chain:
            for _ in range(1 + self.relay.transient_retries):
                try:
                    return await attempt(model)
                except GatewayError as error:
                    if not error.retryable:
                        raise
                    failure = error
        raise failure or errors.server_error()

    def _scope(self, request: Request) -> str:
        """Stored answers belong to the client key that made them."""
        presented = request.headers.get("authorization", "") + "\n" + request.headers.get("x-api-key", "")
        return digest(presented)

    def _response(self, answer: StoredAnswer) -> Response:
        return Response(
            answer.body, status_code=answer.status, media_type=answer.media_type, headers=dict(answer.headers)
        )

    # ------------------------------------------------------------------------------------ non-streaming

    async def _non_streaming(
        self, body: dict[str, Any], chain: list[ModelInfo], request: Request
    ) -> StoredAnswer:
        relay = self.relay
        fingerprint = body_fingerprint(body)
        scope = self._scope(request)
        cache = self._cache
        bypass = request.headers.get(relay.cache_header, "").strip().lower() in relay.cache_bypass_values
        cache_key = ResponseCache.key(scope, fingerprint)

        async def produce() -> StoredAnswer:
            if cache is not None and not bypass:
                hit = await cache.get(cache_key)
                if hit is not None:
                    return replace(
                        hit, headers={**hit.headers, relay.cost_header: "0", relay.cache_header: "HIT"}
                    )
            served: StoredAnswer = await self._attempts(chain, lambda m: self._call(body, m, request))
            answer = replace(served, fingerprint=fingerprint)
            if cache is None:
                return answer
            if not bypass:
                await cache.put(cache_key, answer)
            return replace(answer, headers={**answer.headers, relay.cache_header: "MISS"})

        key = request.headers.get(relay.idempotency_header)
        if key is None or self._idempotency is None:
            produced: StoredAnswer = await produce()
            return produced
        answer, replayed = await self._idempotency.run(scope, key, fingerprint, produce)
        if not replayed:
            return answer
        headers = {k: v for k, v in answer.headers.items() if k != relay.cache_header}
        # "a repeat within 24 hours returns the stored response with Idempotency-Replayed: true and
        # X-Relay-Cost-Usd: 0".
        return replace(answer, headers={**headers, relay.cost_header: "0", relay.replayed_header: "true"})

    async def _call(self, body: Mapping[str, Any], model: ModelInfo, request: Request) -> StoredAnswer:
        gateway = self.gateway
        profile = gateway.settings.profile
        request_id: str = request.state.request_id
        channel = model.channels[0]
        completion_id = f"chatcmpl-{request_id}"
        created = int(gateway.hooks.clock())
        completion: dict[str, Any]
        if channel.protocol == "openai":
            passthrough = chat_to_openai(
                openai_body(body, self.relay.relay_fields), profile=profile, model=model, channel=channel
            )
            content, media_type = await gateway.upstream.create_raw(
                passthrough.body, request_id=request_id, model=model.id, channel=channel
            )
            try:
                usage = json.loads(content).get("usage")
            except (ValueError, AttributeError):
                usage = None
            cost = cost_text(cost_usd(usage, model.prices))
            # Content shape and answer kept: the provider's JSON is passed on as it is.
            return StoredAnswer(200, content, media_type, {self.relay.cost_header: cost})
        if channel.protocol == "gemini":
            translated = await self._gemini_request(body)
            answer = await gateway.upstream.create(
                translated.body, request_id=request_id, model=model.id, channel=channel
            )
            completion = dict(
                gemini_to_chat(
                    answer,
                    completion_id=completion_id,
                    created=created,
                    model=model.id,
                    new_call_id=self._call_id,
                )
            )
        else:
            anthropic = await gateway._translate(body, replace(model, upstream=channel.upstream), request)
            message = await gateway.upstream.create(
                anthropic_extras(body, anthropic.body),
                request_id=request_id,
                model=model.id,
                channel=channel,
                extra_headers=anthropic.headers,
            )
            completion = dict(
                message_to_chat(
                    message, completion_id=completion_id, created=created, model=model.id, profile=profile
                )
            )
            if server_tools(body):
                completion["relay_web_search"] = web_search_report(message)
        cost = cost_text(cost_usd(completion.get("usage"), model.prices))
        content = json.dumps(completion, ensure_ascii=False, separators=(",", ":")).encode()
        return StoredAnswer(200, content, "application/json", {self.relay.cost_header: cost})

    async def _gemini_request(self, body: Mapping[str, Any]) -> GeminiRequest:
        translated = chat_to_gemini(body)
        if translated.remote_images:
            fetched = await self.gateway.images.fetch_all(translated.remote_images)
            translated = chat_to_gemini(body, images=fetched)
        return translated

    def _call_id(self) -> str:
        return "call_" + self.gateway.hooks.new_request_id().replace("-", "")[:24]

    # ------------------------------------------------------------------------------------ streaming

    async def _open(self, body: Mapping[str, Any], model: ModelInfo, request: Request) -> _Opened:
        gateway = self.gateway
        profile = gateway.settings.profile
        request_id: str = request.state.request_id
        channel = model.channels[0]
        completion_id = f"chatcmpl-{request_id}"
        created = int(gateway.hooks.clock())
        source: ChunkSource
        context: Any
        if channel.protocol == "openai":
            passthrough = chat_to_openai(
                openai_body(body, self.relay.relay_fields), profile=profile, model=model, channel=channel
            )
            context = gateway.upstream.stream_raw(
                passthrough.body, request_id=request_id, model=model.id, channel=channel
            )
            source = OpenAIChunks()
        elif channel.protocol == "gemini":
            translated = await self._gemini_request(body)
            context = gateway.upstream.stream(
                translated.body, request_id=request_id, model=model.id, channel=channel
            )
            # The translator always makes the usage chunk; RelayStream shows it only when asked.
            source = GeminiStreamTranslator(
                GeminiStreamContext(completion_id, created, model.id, include_usage=True), self._call_id
            )
        else:
            anthropic = await gateway._translate(body, replace(model, upstream=channel.upstream), request)
            context = gateway.upstream.stream(
                anthropic_extras(body, anthropic.body),
                request_id=request_id,
                model=model.id,
                channel=channel,
                extra_headers=anthropic.headers,
            )
            source = StreamTranslator(StreamContext(completion_id, created, model.id, True, profile))
        pump = RelayStream(
            source, show_usage=asked_for_usage(body), default_code=self.relay.stream_error_default_code
        )
        return _Opened(context, pump)

    async def _stream(self, body: dict[str, Any], chain: list[ModelInfo], request: Request) -> Response:
        async def attempt(model: ModelInfo) -> Response:
            opened = await self._open(body, model, request)
            return await self._until_output(opened, request.state.request_id)

        response: Response = await self._attempts(chain, attempt)
        return response

    async def _until_output(self, opened: _Opened, request_id: str) -> Response:
        """Read the provider's stream until its first output chunk. A failure before it is raised (retryable: the
        next attempt or model may serve); from the first output on, the client owns the stream."""
        events = await opened.context.__aenter__()
        iterator = events.__aiter__()
        pump = opened.pump
        held: list[bytes] = []
        try:
            while not pump.began and not pump.finished:
                try:
                    items = pump.feed(await iterator.__anext__())
                except StopAsyncIteration:
                    items = pump.end_of_stream()
                except GatewayError as error:
                    error.retryable = True
                    raise
                if pump.early_failure is not None:
                    raise pump.early_failure
                held.extend(encode(item) for item in items)
        except BaseException:
            await opened.context.__aexit__(None, None, None)
            raise
        return EventStreamResponse(
            self._rest(opened, iterator, held, request_id),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    async def _rest(
        self, opened: _Opened, iterator: Any, held: list[bytes], request_id: str
    ) -> AsyncIterator[bytes]:
        """The held chunks, then the rest of the stream as it arrives, with `: ping` while the provider is quiet.
        A failure now is one error line and no [DONE] ("Output already sent cannot be taken back")."""
        pump = opened.pump
        loop = asyncio.get_running_loop()
        ping_interval = self.gateway.settings.ping_interval
        pending: asyncio.Future[Any] | None = None
        try:
            for held_item in held:
                yield held_item
            last_write = loop.time()
            while not pump.finished:
                if pending is None:
                    pending = asyncio.ensure_future(iterator.__anext__())
                wait = max(0.0, last_write + ping_interval - loop.time())
                done, _ = await asyncio.wait({pending}, timeout=wait)
                if not done:
                    last_write = loop.time()
                    yield PING
                    continue
                task, pending = pending, None
                try:
                    items = pump.feed(task.result())
                except StopAsyncIteration:
                    items = pump.end_of_stream()
                except GatewayError as error:
                    items = pump.fail(error)
                except Exception as exc:
                    _log_unexpected(request_id, exc)
                    items = pump.fail(errors.server_error())
                if items:
                    last_write = loop.time()
                for item in items:
                    yield encode(item)
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.gather(pending, return_exceptions=True)
            await opened.context.__aexit__(None, None, None)
