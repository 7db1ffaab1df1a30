"""The Gemini family (`generateContent`, `streamGenerateContent?alt=sse`): Chat Completions → Gemini (remote
images downloaded and inlined), the answer → a completion, its events → chunks; a 200 without candidates is
a 502. The model is in the path and the key in `x-goog-api-key`."""

from __future__ import annotations

from reference_gateway.adapters.base import Call, FamilyAdapter, OpenedStream, Prepared, ProviderAnswer
from reference_gateway.errors import bad_upstream_answer
from reference_gateway.policy.models import Channel
from reference_gateway.services import Services
from reference_gateway.translate.gemini.request import chat_to_gemini
from reference_gateway.translate.gemini.response import gemini_to_chat
from reference_gateway.translate.gemini.stream import GeminiStreamContext, GeminiStreamTranslator
from reference_gateway.upstream.client import UpstreamSettings


class GeminiAdapter(FamilyAdapter):
    family = "gemini"

    def path(self, channel: Channel, *, stream: bool) -> str:
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{channel.base_path.rstrip('/')}/v1beta/models/{channel.upstream}:{method}"

    def auth_headers(self, settings: UpstreamSettings) -> dict[str, str]:
        key = settings.gemini_api_key or settings.api_key
        return {"x-goog-api-key": key} if key else {}

    async def prepare(self, call: Call, services: Services) -> Prepared:
        carry = call.carry_reasoning
        translated = chat_to_gemini(call.body, carry_reasoning=carry)
        if translated.remote_images:
            fetched = await services.images.fetch_all(translated.remote_images)
            translated = chat_to_gemini(call.body, images=fetched, carry_reasoning=carry)
        return Prepared(call, translated.body, translated.stream, translated.include_usage)

    async def complete(self, prepared: Prepared, services: Services) -> ProviderAnswer:
        call = prepared.call
        reply = await self.send(prepared, services)
        candidates = reply.answer.get("candidates")
        if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
            raise bad_upstream_answer("a GenerateContentResponse")
        completion = gemini_to_chat(
            reply.answer,
            completion_id=call.completion_id,
            created=call.created,
            model=call.model.id,
            new_call_id=services.new_call_id,
            carry_reasoning=call.carry_reasoning,
        )
        return ProviderAnswer(completion=dict(completion))

    def open_stream(self, prepared: Prepared, services: Services) -> OpenedStream:
        call = prepared.call
        context = self.events(prepared, services)
        stream = GeminiStreamContext(
            call.completion_id, call.created, call.model.id, prepared.include_usage, call.carry_reasoning
        )
        return OpenedStream(context, GeminiStreamTranslator(stream, services.new_call_id))
