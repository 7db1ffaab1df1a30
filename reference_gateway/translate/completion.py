"""The chat completion the gateway answers with, shared by every family (pure): its wire types, the provider's
usage read into it (`UpstreamUsage`, `usage_to_openai`), the finish-reason mapping, the one-choice completion."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypedDict

from reference_gateway.policy.vocabulary import FinishReason, Profile


class _CachedTokens(TypedDict):
    cached_tokens: int


class PromptTokensDetails(_CachedTokens, total=False):
    cache_write_tokens: int  # EZAT
    cache_creation_tokens: int  # Relay: "a Relay addition"


class CompletionTokensDetails(TypedDict):
    reasoning_tokens: int


class _UsageTotals(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class Usage(_UsageTotals, total=False):
    prompt_tokens_details: PromptTokensDetails
    completion_tokens_details: CompletionTokensDetails
    cache_read_input_tokens: int  # the `upstream` usage shape only
    cache_creation_input_tokens: int


class FunctionCall(TypedDict):
    name: str
    arguments: str


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class _ChatMessageBase(TypedDict):
    role: Literal["assistant"]
    content: str | None
    refusal: None


class ChatMessage(_ChatMessageBase, total=False):
    tool_calls: list[ToolCall]
    reasoning_content: str  # LYRouter: the thinking text
    # LYRouter: the original signed thinking blocks; for a bridge that asked for them, the provider's reasoning
    # blocks whatever the profile (Anthropic thinking and redacted_thinking, Gemini thought signatures).
    reasoning_blocks: list[dict[str, Any]]


class Choice(TypedDict):
    index: int
    message: ChatMessage
    logprobs: None
    finish_reason: FinishReason


class ChatCompletion(TypedDict):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


@dataclass(frozen=True)
class UpstreamUsage:
    """Anthropic usage counts, missing values as 0 (wire reference 1.6)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    thinking: int = 0

    def updated(self, wire: Mapping[str, Any] | None) -> UpstreamUsage:
        """These counts overridden by the non-null fields of `wire` (message_delta usage is cumulative)."""
        if not isinstance(wire, Mapping):
            return self
        changes: dict[str, int] = {}
        for attr, key in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_creation", "cache_creation_input_tokens"),
        ):
            value = wire.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                changes[attr] = value
        details = wire.get("output_tokens_details")
        if isinstance(details, Mapping) and isinstance(details.get("thinking_tokens"), int):
            changes["thinking"] = details["thinking_tokens"]
        return replace(self, **changes)


def usage_to_openai(usage: UpstreamUsage, profile: Profile, *, stream: bool = False) -> Usage:
    if profile.usage_shape == "upstream":
        # The upstream's own counts: prompt_tokens excludes cache reads and writes, reported beside it
        # (non-streaming) or not at all (streaming).
        totals: Usage = {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }
        if not stream:
            totals["cache_read_input_tokens"] = usage.cache_read
            totals["cache_creation_input_tokens"] = usage.cache_creation
        return totals
    # EZAT: "usage.prompt_tokens counts all input, cached or not"; reasoning tokens are part of completion_tokens.
    # Relay: cached_tokens and cache_creation_tokens "are counted inside prompt_tokens".
    prompt = usage.input_tokens + usage.cache_read + usage.cache_creation
    details: PromptTokensDetails = {"cached_tokens": usage.cache_read}
    if profile.usage_shape == "relay":
        details["cache_creation_tokens"] = usage.cache_creation
    else:
        details["cache_write_tokens"] = usage.cache_creation
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": details,
        "completion_tokens_details": {"reasoning_tokens": usage.thinking},
    }


def finish_reason(stop_reason: Any, profile: Profile) -> FinishReason:
    """Anthropic stop_reason → OpenAI finish_reason; an unknown reason is a plain `stop`, never passed through."""
    return profile.finish_reasons.get(stop_reason, "stop") if isinstance(stop_reason, str) else "stop"


def arguments_json(value: Any) -> str:
    return json.dumps(value if value is not None else {}, ensure_ascii=False, separators=(",", ":"))


def chat_completion(
    completion_id: str, created: int, model: str, message: ChatMessage, finish: FinishReason, usage: Usage
) -> ChatCompletion:
    """The one-choice completion every family's answer becomes."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }


def string_or(value: Any, fallback: str) -> str:
    return value if isinstance(value, str) and value else fallback
