"""The Anthropic family (Messages API): Chat Completions → Messages, the Message → a completion, its events →
chunks; a 200 that holds an error envelope is that error, one that is not a Message a 502."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reference_gateway.adapters.base import Call, FamilyAdapter, OpenedStream, Prepared, ProviderAnswer
from reference_gateway.errors import bad_upstream_answer, from_upstream
from reference_gateway.policy.models import Channel
from reference_gateway.policy.vocabulary import Profile
from reference_gateway.services import Services
from reference_gateway.translate.anthropic.request import RequestOptions, chat_to_anthropic
from reference_gateway.translate.anthropic.response import message_to_chat
from reference_gateway.translate.anthropic.stream import StreamTranslator
from reference_gateway.translate.chunks import StreamContext
from reference_gateway.translate.relay import anthropic_extras, server_tools, web_search_report
from reference_gateway.upstream.client import UpstreamSettings


class AnthropicAdapter(FamilyAdapter):
    family = "anthropic"

    def path(self, channel: Channel, *, stream: bool) -> str:
        return channel.base_path.rstrip("/") + "/v1/messages"

    def auth_headers(self, settings: UpstreamSettings) -> dict[str, str]:
        headers = {"anthropic-version": settings.anthropic_version}
        if settings.api_key:
            headers["x-api-key"] = settings.api_key
        return headers

    async def prepare(self, call: Call, services: Services) -> Prepared:
        profile = services.profile
        model = replace(call.model, upstream=call.channel.upstream)
        options = replace(_options(call.headers, profile), carry_reasoning=call.carry_reasoning)
        translated = chat_to_anthropic(call.body, profile=profile, model=model, options=options)
        if translated.remote_images:
            fetched = await services.images.fetch_all(translated.remote_images)
            translated = chat_to_anthropic(
                call.body, profile=profile, model=model, options=options, images=fetched
            )
        body: Mapping[str, Any] = translated.body
        if profile.relay is not None:
            # Relay's additions: `user`, `output_config` whole, the server tools.
            body = anthropic_extras(call.body, translated.body)
        return Prepared(call, body, translated.stream, translated.include_usage, translated.headers)

    async def complete(self, prepared: Prepared, services: Services) -> ProviderAnswer:
        call, profile = prepared.call, services.profile
        reply = await self.send(prepared, services)
        message = _checked_message(reply.answer, call.model.id)
        completion: dict[str, Any] = dict(
            message_to_chat(
                message,
                completion_id=call.completion_id,
                created=call.created,
                model=call.model.id,
                profile=profile,
                carry_reasoning=call.carry_reasoning,
            )
        )
        if profile.relay is not None and server_tools(call.body):
            completion["relay_web_search"] = web_search_report(message)
        return ProviderAnswer(completion=completion)

    def open_stream(self, prepared: Prepared, services: Services) -> OpenedStream:
        call = prepared.call
        context = self.events(prepared, services)
        stream = StreamContext(
            call.completion_id,
            call.created,
            call.model.id,
            prepared.include_usage,
            services.profile,
            carry_reasoning=call.carry_reasoning,
        )
        return OpenedStream(context, StreamTranslator(stream))


def _options(headers: Mapping[str, str], profile: Profile) -> RequestOptions:
    """What the translation reads from the client's headers: EZAT's cache switch and session, and the headers
    the profile forwards."""
    cache_header = headers.get(profile.cache_off_header, "") if profile.cache_off_header else ""
    session = headers.get(profile.session_header) if profile.session_header else None
    forwarded = {name: headers[name] for name in profile.anthropic.forwarded_headers if name in headers}
    return RequestOptions(
        cache_off=cache_header.strip().lower() == "off",
        session_header=session or None,
        client_headers=forwarded,
    )


def _checked_message(answer: dict[str, Any], model: str) -> dict[str, Any]:
    if answer.get("type") == "error":
        # A 200 whose body is an error envelope is still an error.
        error = answer.get("error")
        raise from_upstream(None, error if isinstance(error, dict) else {}, model=model)
    content = answer.get("content")
    if answer.get("type", "message") != "message" or not _objects_with_type(content):
        # Never a fake success: `{"foo": 1}` would otherwise become an empty `stop` completion.
        raise bad_upstream_answer("a Message")
    return answer


def _objects_with_type(blocks: Any) -> bool:
    return isinstance(blocks, list) and all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in blocks
    )
