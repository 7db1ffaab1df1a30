"""Gemini `streamGenerateContent?alt=sse` → OpenAI `chat.completion.chunk` stream (pure): a synchronous state
machine fed one decoded Gemini event (a `GenerateContentResponse`) at a time.

Relay "Streamed tool calls": Gemini sends each functionCall whole; it is folded into the one fragment format —
a first fragment with index, id, type and function.name (arguments ""), then the arguments. Gemini ends a
stream by closing it (there is no [DONE]): the finish chunk, the usage chunk when asked and [DONE] are sent
then, and only if a finishReason arrived; a stream that closes without one is incomplete (an error).
Unset fields are omitted, never null.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reference_gateway.errors import GatewayError, server_error
from reference_gateway.translate.chunks import DONE, StreamItem
from reference_gateway.translate.completion import ToolCall, Usage
from reference_gateway.translate.gemini.response import (
    NewCallId,
    candidate_parts,
    finish_reason,
    gemini_error,
    gemini_usage,
    is_answer_text,
    thought_signature,
    tool_call,
)


@dataclass(frozen=True)
class GeminiStreamContext:
    completion_id: str
    created: int
    model: str
    include_usage: bool
    # A bridge carries the thought signatures (`reasoning_blocks` deltas, each after its part's own chunks).
    carry_reasoning: bool = False


class GeminiStreamTranslator:
    def __init__(self, context: GeminiStreamContext, new_call_id: NewCallId) -> None:
        self._ctx = context
        self._new_call_id = new_call_id
        self._started = False
        self._finished = False
        self._tools = 0
        self._reason: Any = None
        self._blocked = False
        self._usage: Usage = gemini_usage(None)

    @property
    def finished(self) -> bool:
        return self._finished

    def _chunk(self, delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "delta": dict(delta)}
        if finish is not None:
            choice["finish_reason"] = finish
        return {
            "id": self._ctx.completion_id,
            "object": "chat.completion.chunk",
            "created": self._ctx.created,
            "model": self._ctx.model,
            "choices": [choice],
        }

    def _start(self) -> list[StreamItem]:
        if self._started:
            return []
        self._started = True
        return [self._chunk({"role": "assistant", "content": ""})]

    def feed(self, event: Mapping[str, Any]) -> list[StreamItem]:
        if self._finished:
            return []
        error = event.get("error")
        if isinstance(error, Mapping):
            return self.fail(gemini_error(error))
        items = self._start()
        if "usageMetadata" in event:
            self._usage = gemini_usage(event.get("usageMetadata"))
        candidates = event.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = event.get("promptFeedback")
            if isinstance(feedback, Mapping) and feedback.get("blockReason"):
                self._blocked = True
            return items
        parts, reason = candidate_parts(event)
        if reason is not None:
            self._reason = reason
        for part in parts:
            if is_answer_text(part) and part["text"]:
                items.append(self._chunk({"content": part["text"]}))
            call = part.get("functionCall")
            whole = tool_call(call, self._new_call_id) if isinstance(call, Mapping) else None
            signed = thought_signature(part, whole) if self._ctx.carry_reasoning else None
            if signed is not None:  # before its call, as a reasoning item comes before the items of its turn
                items.append(self._chunk({"reasoning_blocks": [signed]}))
            if whole is not None:
                items.extend(self._tool_call(whole))
        return items

    def _tool_call(self, whole: ToolCall) -> list[StreamItem]:
        index = self._tools
        self._tools += 1
        first = {
            "index": index,
            "id": whole["id"],
            "type": "function",
            "function": {"name": whole["function"]["name"], "arguments": ""},
        }
        rest = {"index": index, "function": {"arguments": whole["function"]["arguments"]}}
        return [self._chunk({"tool_calls": [first]}), self._chunk({"tool_calls": [rest]})]

    def fail(self, error: GatewayError) -> list[StreamItem]:
        if self._finished:
            return []
        self._finished = True
        return [error.to_envelope()]

    def end_of_stream(self) -> list[StreamItem]:
        if self._finished:
            return []
        if self._reason is None and not self._blocked:
            return self.fail(server_error("The upstream stream ended before the answer was complete."))
        self._finished = True
        items = self._start()
        reason = "content_filter" if self._reason is None else finish_reason(self._reason, self._tools > 0)
        items.append(self._chunk({}, reason))
        if self._ctx.include_usage:
            usage_chunk = self._chunk({})
            usage_chunk["choices"] = []
            usage_chunk["usage"] = self._usage
            items.append(usage_chunk)
        items.append(DONE)
        return items
