"""The relay flow (profile `relay`): one endpoint over three provider families, with the image limit before
routing, transient retry and the model's fallback chain, the cost header, the idempotency store and the
response cache.

A stream counts as served at its first output chunk ("after output has begun"): until then a failure is
retried or falls back; the role-only first chunk is held back meanwhile.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from reference_gateway.adapters import CARRY_REASONING, Call, OpenedStream, ProviderAnswer, adapter_for
from reference_gateway.errors import GatewayError
from reference_gateway.flows.attempts import first_success
from reference_gateway.flows.relay_store import (
    Idempotency,
    ResponseCache,
    StateStore,
    StoredAnswer,
    body_fingerprint,
    digest,
    open_store,
)
from reference_gateway.policy.channels import requested_model, resolve
from reference_gateway.policy.models import ModelInfo
from reference_gateway.policy.vocabulary import Relay
from reference_gateway.services import Services
from reference_gateway.translate.relay import (
    RelayStream,
    asked_for_usage,
    check_images,
    cost_text,
    cost_usd,
    image_parts,
)
from reference_gateway.web.streaming import Encoded, event_stream


class RelayFlow:
    def __init__(self, services: Services, relay: Relay) -> None:
        self.services = services
        self.relay = relay
        self._store: StateStore | None = None
        self._idempotency: Idempotency | None = None
        self._cache: ResponseCache | None = None

    async def start(self) -> None:
        settings = self.services.settings
        if settings.state_url is None:
            return
        self._store = open_store(settings.state_url, self.services.hooks.clock)
        wait = settings.upstream.request_timeout + 5
        self._idempotency = Idempotency(self._store, self.relay.idempotency_ttl_seconds, wait=wait)
        if settings.cache_ttl_seconds > 0:
            self._cache = ResponseCache(self._store, settings.cache_ttl_seconds)

    async def aclose(self) -> None:
        if self._store is not None:
            await self._store.aclose()

    async def chat_completions(self, request: Request) -> Response:
        settings = self.services.settings
        profile = settings.profile
        body = await self.services.intake.read(request)
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
        answer = await self._non_streaming(body, chain, request)
        return Response(
            answer.body, status_code=answer.status, media_type=answer.media_type, headers=dict(answer.headers)
        )

    def _chain(self, model: ModelInfo, has_images: bool) -> list[ModelInfo]:
        """The model, then its fallback chain (models that cannot take the request's images are skipped)."""
        catalog = self.services.settings.catalog
        chain = [model]
        for fallback_id in model.fallbacks:
            fallback = catalog.get(fallback_id)
            if fallback is not None and fallback.channels and (fallback.vision or not has_images):
                chain.append(fallback)
        return chain

    def _call(self, body: dict[str, Any], model: ModelInfo, request: Request) -> Call:
        # A model of the chain is served by its first channel.
        request_id: str = request.state.request_id
        carry = bool(request.scope.get(CARRY_REASONING))
        return Call(body, request.headers, model, model.channels[0], request_id, self.services.now(), carry)

    @property
    def _tries(self) -> int:
        """Each model of the chain is tried `1 + transient_retries` times, while the failures are transient."""
        return 1 + self.relay.transient_retries

    # ------------------------------------------------------------------------------------ non-streaming

    async def _non_streaming(
        self, body: dict[str, Any], chain: list[ModelInfo], request: Request
    ) -> StoredAnswer:
        relay = self.relay
        fingerprint = body_fingerprint(body)
        # Stored answers belong to the client key that made them (and to a bridge carrying reasoning, whose answers
        # hold the reasoning blocks a chat client's do not).
        carry = "\ncarry-reasoning" if request.scope.get(CARRY_REASONING) else ""
        scope = digest(
            request.headers.get("authorization", "") + "\n" + request.headers.get("x-api-key", "") + carry
        )
        cache = self._cache
        bypass = request.headers.get(relay.cache_header, "").strip().lower() in relay.cache_bypass_values
        cache_key = ResponseCache.key(scope, fingerprint)

        async def attempt(model: ModelInfo) -> StoredAnswer:
            call = self._call(body, model, request)
            adapter = adapter_for(call.channel)
            prepared = await adapter.prepare(call, self.services)
            return self._stored(await adapter.complete(prepared, self.services), model)

        async def produce() -> StoredAnswer:
            if cache is not None and not bypass:
                hit = await cache.get(cache_key)
                if hit is not None:
                    return replace(
                        hit, headers={**hit.headers, relay.cost_header: "0", relay.cache_header: "HIT"}
                    )
            served = await first_success(chain, attempt, tries=self._tries)
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

    def _stored(self, answer: ProviderAnswer, model: ModelInfo) -> StoredAnswer:
        # A model without prices reports no cost at all: a 0 would say the answer was free (gateway features,
        # "Cost": "absent, never 0").
        cost = (
            {}
            if model.prices is None
            else {self.relay.cost_header: cost_text(cost_usd(answer.usage, model.prices))}
        )
        if answer.passed is not None:
            # Content shape and answer kept: the provider's JSON is passed on as it is.
            return StoredAnswer(200, answer.passed.content, answer.passed.media_type, cost)
        content = json.dumps(answer.completion, ensure_ascii=False, separators=(",", ":")).encode()
        return StoredAnswer(200, content, "application/json", cost)

    # ------------------------------------------------------------------------------------ streaming

    async def _stream(self, body: dict[str, Any], chain: list[ModelInfo], request: Request) -> Response:
        async def attempt(model: ModelInfo) -> Response:
            call = self._call(body, model, request)
            adapter = adapter_for(call.channel)
            # The translator always makes the usage chunk; RelayStream shows it only when asked.
            prepared = replace(await adapter.prepare(call, self.services), include_usage=True)
            return await self._until_output(adapter.open_stream(prepared, self.services), call)

        return await first_success(chain, attempt, tries=self._tries)

    async def _until_output(self, opened: OpenedStream, call: Call) -> Response:
        """Read the provider's stream until its first output chunk. A failure before it is raised (retryable: the
        next attempt or model may serve); from the first output on, the client owns the stream, and a failure
        is one error line and no [DONE] ("Output already sent cannot be taken back")."""
        pump = RelayStream(
            opened.source,
            show_usage=asked_for_usage(call.body),
            default_code=self.relay.stream_error_default_code,
        )
        encoded = Encoded(pump)
        events = await opened.context.__aenter__()
        iterator = events.__aiter__()
        held: list[bytes] = []
        try:
            while not pump.began and not pump.finished:
                try:
                    items = encoded.feed(await iterator.__anext__())
                except StopAsyncIteration:
                    items = encoded.end_of_stream()
                except GatewayError as error:
                    error.retryable = True
                    raise
                if pump.early_failure is not None:
                    raise pump.early_failure
                held.extend(items)
        except BaseException:
            await opened.context.__aexit__(None, None, None)
            raise
        return event_stream(
            opened.context,
            iterator,
            encoded,
            ping_interval=self.services.settings.ping_interval,
            request_id=call.request_id,
            held=held,
        )
