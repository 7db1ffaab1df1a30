"""Anthropic SSE → OpenAI `chat.completion.chunk` stream (pure): a synchronous state machine fed one upstream
event at a time (reference_gateway/sse.py decodes them). Nothing is buffered: each event yields its chunks at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reference_gateway.errors import GatewayError, from_upstream, server_error
from reference_gateway.policy.vocabulary import FinishReason
from reference_gateway.translate.chunks import DONE, Chunk, Delta, StreamContext, StreamItem
from reference_gateway.translate.completion import (
    UpstreamUsage,
    arguments_json,
    finish_reason,
    string_or,
    usage_to_openai,
)


@dataclass
class _Tool:
    index: int
    sent_arguments: bool = False


class StreamTranslator:
    """Feed Anthropic stream events (decoded JSON objects) in order; each call returns the items to send.

    EZAT "Streaming": role chunk first; text and tool-call fragments (0-based tool indexes, whatever the
    Anthropic block index); one finish chunk with an empty delta; the usage chunk when asked; `[DONE]`.
    A failure ends the stream with `data: {"error": …}` (and `[DONE]`, per the profile) and no usage chunk.
    For a bridge that carries reasoning (`carry_reasoning`): the thinking text as `reasoning_content` deltas, and
    each thinking or redacted_thinking block whole, signature included, in one `reasoning_blocks` delta at its
    stop.
    """

    def __init__(self, context: StreamContext) -> None:
        self._ctx = context
        self._id = context.completion_id
        self._model = context.model
        self._started = False
        self._finished = False
        self._tools: dict[int, _Tool] = {}
        self._thinking: dict[int, dict[str, Any]] = {}  # Anthropic block index -> the block so far
        self._usage = UpstreamUsage()
        self._stop_reason: str | None = None

    @property
    def finished(self) -> bool:
        return self._finished

    def _chunk(self, delta: Delta, finish: FinishReason | None = None) -> Chunk:
        chunk: Chunk = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._ctx.created,
            "model": self._model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self._ctx.include_usage:
            chunk["usage"] = None
        return chunk

    def _start(self) -> list[StreamItem]:
        if self._started:
            return []
        self._started = True
        return [self._chunk({"role": "assistant", "content": ""})]

    def _tool_arguments(self, tool: _Tool, arguments: str) -> Chunk:
        tool.sent_arguments = True
        return self._chunk({"tool_calls": [{"index": tool.index, "function": {"arguments": arguments}}]})

    def feed(self, event: Mapping[str, Any]) -> list[StreamItem]:
        if self._finished:
            return []
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, Mapping):
                self._usage = self._usage.updated(message.get("usage"))
                if self._ctx.profile.anthropic.upstream_identity and not self._started:
                    # LYRouter: the upstream's id and model name, in every chunk.
                    self._id = string_or(message.get("id"), self._id)
                    self._model = string_or(message.get("model"), self._model)
            return self._start()
        if kind == "content_block_start":
            return self._start() + self._block_start(event)
        if kind == "content_block_delta":
            return self._start() + self._block_delta(event)
        if kind == "content_block_stop":
            tool = self._tools.get(_int(event.get("index")))
            if tool is not None and not tool.sent_arguments:
                # A call without arguments still gets a parseable JSON object.
                return [self._tool_arguments(tool, "{}")]
            block = self._thinking.pop(_int(event.get("index")), None)
            if block is not None and self._ctx.carry_reasoning:
                return [self._chunk({"reasoning_blocks": [block]})]
            return []
        if kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping) and isinstance(delta.get("stop_reason"), str):
                self._stop_reason = delta["stop_reason"]
            self._usage = self._usage.updated(event.get("usage"))
            return []
        if kind == "message_stop":
            return self._finish()
        if kind == "error":
            error = event.get("error")
            return self.fail(from_upstream(None, error if isinstance(error, Mapping) else {}))
        return []  # ping, and event types this gateway does not know

    def _block_start(self, event: Mapping[str, Any]) -> list[StreamItem]:
        block = event.get("content_block")
        if not isinstance(block, Mapping):
            return []
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"]:
            return [self._chunk({"content": block["text"]})]
        if block.get("type") in ("thinking", "redacted_thinking"):
            # Kept whole (its text and signature grow by deltas) for a bridge that carries it.
            kept = dict(block)
            if kept["type"] == "thinking":
                kept = {"type": "thinking", "thinking": str(block.get("thinking") or ""),
                        "signature": str(block.get("signature") or "")}  # fmt: skip
            self._thinking[_int(event.get("index"))] = kept
            return []
        if block.get("type") != "tool_use":
            return []  # server-tool blocks are never returned
        tool = _Tool(index=len(self._tools))
        self._tools[_int(event.get("index"))] = tool
        first = self._chunk(
            {
                "tool_calls": [
                    {
                        "index": tool.index,
                        "id": str(block.get("id", "")),
                        "type": "function",
                        "function": {"name": str(block.get("name", "")), "arguments": ""},
                    }
                ]
            }
        )
        preset = block.get("input")
        if isinstance(preset, Mapping) and preset:
            return [first, self._tool_arguments(tool, arguments_json(preset))]
        return [first]

    def _block_delta(self, event: Mapping[str, Any]) -> list[StreamItem]:
        delta = event.get("delta")
        if not isinstance(delta, Mapping):
            return []
        if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str) and delta["text"]:
            return [self._chunk({"content": delta["text"]})]
        thinking = self._thinking.get(_int(event.get("index")))
        if delta.get("type") == "signature_delta" and thinking is not None:
            thinking["signature"] = str(thinking.get("signature") or "") + str(delta.get("signature") or "")
            return []
        if (
            delta.get("type") == "thinking_delta"
            and isinstance(delta.get("thinking"), str)
            and delta["thinking"]
        ):
            if thinking is not None:
                thinking["thinking"] = str(thinking.get("thinking") or "") + delta["thinking"]
            if self._ctx.profile.anthropic.reasoning_output or self._ctx.carry_reasoning:
                return [self._chunk({"reasoning_content": delta["thinking"]})]
            return []
        if delta.get("type") == "input_json_delta":
            tool = self._tools.get(_int(event.get("index")))
            piece = delta.get("partial_json")
            if tool is not None and isinstance(piece, str) and piece:
                return [self._tool_arguments(tool, piece)]
        return []

    def _finish(self) -> list[StreamItem]:
        items = self._start()
        items.append(self._chunk({}, finish_reason(self._stop_reason, self._ctx.profile)))
        if self._ctx.include_usage:
            usage_chunk = self._chunk({})
            usage_chunk["choices"] = []
            usage_chunk["usage"] = usage_to_openai(self._usage, self._ctx.profile, stream=True)
            items.append(usage_chunk)
        items.append(DONE)
        self._finished = True
        return items

    def fail(self, error: GatewayError) -> list[StreamItem]:
        """The stream failed after it started: an error event instead of a finish (and no usage chunk)."""
        if self._finished:
            return []
        self._finished = True
        envelope: Mapping[str, Any] = error.to_envelope()
        code = self._ctx.profile.stream_error_code
        if code is not None:
            # LYRouter: "an error event with "code": "stream_interrupted"".
            envelope = {"error": {**error.to_object(), "code": code}}
        items: list[StreamItem] = [envelope]
        if self._ctx.profile.stream_error == "error_then_done":
            items.append(DONE)
        return items

    def end_of_stream(self) -> list[StreamItem]:
        """The upstream closed the stream. Without its `message_stop` the answer is incomplete: an error, never
        a synthetic `stop`."""
        return self.fail(server_error("The upstream stream ended before the answer was complete."))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1
