"""Gemini `GenerateContentResponse` → OpenAI `chat.completion` (pure), plus the usage, finish-reason and error
mappings the stream shares.

Gemini has no tool-call ids: the caller passes the factory that mints them (Relay "mints the tool-call ids
Gemini does not have"), so the translation stays free of globals and clocks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reference_gateway.errors import GatewayError, from_upstream
from reference_gateway.policy.vocabulary import FinishReason
from reference_gateway.translate.completion import (
    ChatCompletion,
    ChatMessage,
    ToolCall,
    Usage,
    arguments_json,
    chat_completion,
)

NewCallId = Callable[[], str]

# google-genai `types.FinishReason`: the safety-like reasons are a content filter; MAX_TOKENS is `length`;
# STOP and the rest (OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, ...) end the turn without a limit.
_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
    }
)

# Gemini's error `status` strings → the HTTP status they come with (for errors inside a stream).
_STATUS_OF = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}


def finish_reason(reason: Any, has_tool_calls: bool) -> FinishReason:
    if has_tool_calls:
        return "tool_calls"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _FILTERED:
        return "content_filter"
    return "stop"


def gemini_usage(meta: Any) -> Usage:
    """usageMetadata → OpenAI usage. promptTokenCount already contains the cached tokens (Relay: both cache
    counts "are counted inside prompt_tokens"); thinking tokens are part of completion_tokens."""
    meta = meta if isinstance(meta, Mapping) else {}

    def count(key: str) -> int:
        value = meta.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    prompt = count("promptTokenCount") + count("toolUsePromptTokenCount")
    completion = count("candidatesTokenCount") + count("thoughtsTokenCount")
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        # Gemini reads its implicit cache only; nothing is reported as written.
        "prompt_tokens_details": {
            "cached_tokens": count("cachedContentTokenCount"),
            "cache_creation_tokens": 0,
        },
        "completion_tokens_details": {"reasoning_tokens": count("thoughtsTokenCount")},
    }


def candidate_parts(answer: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], Any]:
    """The first candidate's parts and its finishReason (Chat Completions has one choice)."""
    candidates = answer.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    if not isinstance(first, Mapping):
        return [], None
    content = first.get("content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    kept = [p for p in parts if isinstance(p, Mapping)] if isinstance(parts, list) else []
    return kept, first.get("finishReason")


def tool_call(call: Mapping[str, Any], new_call_id: NewCallId) -> ToolCall:
    own = call.get("id")
    return {
        "id": own if isinstance(own, str) and own else new_call_id(),
        "type": "function",
        "function": {"name": str(call.get("name", "")), "arguments": arguments_json(call.get("args"))},
    }


def is_answer_text(part: Mapping[str, Any]) -> bool:
    # Thought summaries (`thought: true`) are not carried, as for Anthropic.
    return isinstance(part.get("text"), str) and part.get("thought") is not True


def thought_signature(part: Mapping[str, Any], call: ToolCall | None) -> dict[str, Any] | None:
    """A function call part's thought signature as a reasoning block (the chat vocabulary's `reasoning_blocks`), tied
    to the tool call it came on; None without one. Gemini refuses a current turn's call without its signature (Gemini
    API, Thought signatures); a text part's signature it only recommends, and it is not carried."""
    signature = part.get("thoughtSignature")
    if call is None or not isinstance(signature, str) or not signature:
        return None
    return {"type": "thought_signature", "signature": signature, "tool_call_id": call["id"]}


def gemini_to_chat(
    answer: Mapping[str, Any],
    *,
    completion_id: str,
    created: int,
    model: str,
    new_call_id: NewCallId,
    carry_reasoning: bool = False,
) -> ChatCompletion:
    """One answer; `carry_reasoning`: its thought signatures as `reasoning_blocks`, for a bridge that carries them
    (Relay's chat clients never see them: "the OpenAI shape has nowhere to put it")."""
    parts, reason = candidate_parts(answer)
    texts = [str(p["text"]) for p in parts if is_answer_text(p)]
    calls: list[ToolCall] = []
    signatures: list[dict[str, Any]] = []
    for part in parts:
        call = (
            tool_call(part["functionCall"], new_call_id)
            if isinstance(part.get("functionCall"), Mapping)
            else None
        )
        if call is not None:
            calls.append(call)
        signed = thought_signature(part, call)
        if signed is not None:
            signatures.append(signed)
    message: ChatMessage = {
        "role": "assistant",
        "content": "".join(texts) if texts else None,
        "refusal": None,
    }
    if calls:
        message["tool_calls"] = calls
    if signatures and carry_reasoning:
        message["reasoning_blocks"] = signatures
    candidates = answer.get("candidates")
    # No candidate at all: the prompt was blocked (promptFeedback.blockReason).
    blocked = not (isinstance(candidates, list) and candidates)
    return chat_completion(
        completion_id,
        created,
        model,
        message,
        "content_filter" if blocked else finish_reason(reason, bool(calls)),
        gemini_usage(answer.get("usageMetadata")),
    )


def gemini_error(error: Mapping[str, Any]) -> GatewayError:
    """An `{"error": {"code", "message", "status"}}` object (inside a stream) → the client's error."""
    code = error.get("code")
    status = code if isinstance(code, int) and not isinstance(code, bool) else None
    if status is None:
        status = _STATUS_OF.get(str(error.get("status", "")), 500)
    return from_upstream(status, {"message": error.get("message")})
