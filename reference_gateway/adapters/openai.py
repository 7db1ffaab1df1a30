"""The OpenAI-compatible family (Chat Completions): the body passes through with the profile's few changes;
the answer is passed on as it came (a 200 without `choices` is a 502); the stream's events are passed on
verbatim, or read as chunks for a flow that re-encodes them (Relay)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reference_gateway.adapters.base import Call, FamilyAdapter, OpenedStream, Prepared, ProviderAnswer
from reference_gateway.errors import bad_upstream_answer
from reference_gateway.policy.models import Channel
from reference_gateway.services import Services
from reference_gateway.translate.chunks import ChunkSource
from reference_gateway.translate.openai.passthrough import (
    OpenAIChunks,
    PassthroughStream,
    chat_to_openai,
    without_reasoning_blocks,
)
from reference_gateway.translate.relay import openai_body
from reference_gateway.upstream.client import UpstreamSettings


class OpenAIAdapter(FamilyAdapter):
    family = "openai"

    def path(self, channel: Channel, *, stream: bool) -> str:
        return channel.base_path.rstrip("/") + "/chat/completions"

    def auth_headers(self, settings: UpstreamSettings) -> dict[str, str]:
        key = settings.openai_api_key or settings.api_key
        return {"authorization": f"Bearer {key}"} if key else {}

    async def prepare(self, call: Call, services: Services) -> Prepared:
        profile = services.profile
        body: Mapping[str, Any] = call.body
        if call.carry_reasoning:
            # A bridge's reasoning blocks (another family's signed thinking) have no place at an OpenAI-compatible
            # provider, which would refuse the unknown message field.
            body = without_reasoning_blocks(body)
        if profile.relay is not None:
            # Relay-only fields removed; a stream always asks the provider for usage.
            body = openai_body(call.body, profile.relay.relay_fields)
        passthrough = chat_to_openai(body, profile=profile, model=call.model, channel=call.channel)
        return Prepared(call, passthrough.body, passthrough.stream, include_usage=passthrough.stream)

    async def complete(self, prepared: Prepared, services: Services) -> ProviderAnswer:
        reply = await self.send(prepared, services)
        choices = reply.answer.get("choices")
        if not isinstance(choices, list) or not all(isinstance(choice, dict) for choice in choices):
            raise bad_upstream_answer("a chat completion")
        # LYRouter: the answer, usage, id and model are the upstream's.
        return ProviderAnswer(passed=reply)

    def open_stream(self, prepared: Prepared, services: Services) -> OpenedStream:
        context = self.events(prepared, services, decoded=False)
        # Relay re-encodes every chunk (nulls dropped); the others pass the provider's events on as they are.
        source: ChunkSource = (
            PassthroughStream(services.profile) if services.profile.relay is None else OpenAIChunks()
        )
        return OpenedStream(context, source)
