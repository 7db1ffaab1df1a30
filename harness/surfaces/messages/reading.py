"""Anthropic Messages read (docs/wire-reference.md §1): what a stream's named events mean, and the Message a client
assembles from them as the SDKs' accumulators do (anthropic-python `MessageStream`, anthropic-typescript
`MessageStream`): `message_start` gives the message, each block is started, grown by its deltas and stopped by
index, `message_delta` sets the stop reason and the cumulative usage. Pure; tolerant of garbage (what cannot be
read is left out, the grammar check says why)."""

from __future__ import annotations

import copy
import json
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.reading import GatewayAnswer, Payload, StreamView

# The event types of a Messages stream (Anthropic, "Streaming Messages": the event flow).
MESSAGE_START = "message_start"
BLOCK_START = "content_block_start"
BLOCK_DELTA = "content_block_delta"
BLOCK_STOP = "content_block_stop"
MESSAGE_DELTA = "message_delta"
MESSAGE_STOP = "message_stop"
PING = "ping"
ERROR = "error"
KNOWN = (MESSAGE_START, BLOCK_START, BLOCK_DELTA, BLOCK_STOP, MESSAGE_DELTA, MESSAGE_STOP, PING, ERROR)

# Which delta grows which block (a text block may also take citations).
DELTAS_OF: dict[str, tuple[str, ...]] = {
    "text": ("text_delta", "citations_delta"),
    "tool_use": ("input_json_delta",),
    "server_tool_use": ("input_json_delta",),
    "mcp_tool_use": ("input_json_delta",),
    "thinking": ("thinking_delta", "signature_delta"),
    "redacted_thinking": (),
}
# Blocks whose `input` is streamed as `input_json_delta` fragments.
INPUT_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")


def kind(payload: Payload) -> str | None:
    """The payload's `type`, or None for a payload that is not an object with a string type."""
    value = payload.json
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def carries_content(data: Any) -> bool:
    """An event that carries the answer itself (a `content_block_delta`: text, thinking, a tool's input), not only
    its framing: what `streamed` times."""
    return isinstance(data, dict) and data.get("type") == "content_block_delta"


def is_error(payload: Payload) -> bool:
    return kind(payload) == ERROR or payload.event.event == ERROR


def error_payloads(view: StreamView) -> list[Payload]:
    return [p for p in view.payloads if p.parsed is not None and is_error(p)]


def assemble_view(view: StreamView) -> dict[str, Any]:
    """The Message a client's accumulator builds from the stream's events; `{}` when there is no message_start."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    for payload in view.payloads:
        data = payload.json
        if not isinstance(data, dict):
            continue
        event = data.get("type")
        index = data.get("index")
        if event == MESSAGE_START and isinstance(data.get("message"), dict):
            message = copy.deepcopy(data["message"])
            message.setdefault("content", [])
        elif event == BLOCK_START and isinstance(index, int) and isinstance(data.get("content_block"), dict):
            blocks[index] = copy.deepcopy(data["content_block"])
        elif event == BLOCK_DELTA and index in blocks and isinstance(data.get("delta"), dict):
            _grow(blocks[index], data["delta"], partial.setdefault(index, []))
        elif event == BLOCK_STOP and index in blocks and blocks[index].get("type") in INPUT_BLOCKS:
            joined = "".join(partial.pop(index, []))
            try:
                blocks[index]["input"] = json.loads(joined) if joined else blocks[index].get("input", {})
            except ValueError:
                blocks[index]["input"] = joined  # not JSON: the grammar check says so
        elif event == MESSAGE_DELTA and message:
            delta = data.get("delta")
            if isinstance(delta, dict):
                message.update(delta)
            usage = data.get("usage")
            if isinstance(usage, dict):
                merged: dict[str, Any] = message["usage"] if isinstance(message.get("usage"), dict) else {}
                message["usage"] = {**merged, **{k: v for k, v in usage.items() if v is not None}}
    if message:
        message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _grow(block: dict[str, Any], delta: dict[str, Any], partial: list[str]) -> None:
    kind_ = delta.get("type")
    if kind_ == "text_delta" and isinstance(delta.get("text"), str):
        block["text"] = str(block.get("text") or "") + delta["text"]
    elif kind_ == "input_json_delta" and isinstance(delta.get("partial_json"), str):
        partial.append(delta["partial_json"])
    elif kind_ == "thinking_delta" and isinstance(delta.get("thinking"), str):
        block["thinking"] = str(block.get("thinking") or "") + delta["thinking"]
    elif kind_ == "signature_delta" and isinstance(delta.get("signature"), str):
        block["signature"] = str(block.get("signature") or "") + delta["signature"]
    elif kind_ == "citations_delta" and isinstance(delta.get("citation"), dict):
        citations: list[Any] = block["citations"] if isinstance(block.get("citations"), list) else []
        block["citations"] = [*citations, delta["citation"]]


def text_of(message: Any) -> str:
    """The text blocks of a Message, joined."""
    content = reading.as_object(message).get("content")
    if not isinstance(content, list):
        return ""
    return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))


def answer_document(exchange: Exchange) -> GatewayAnswer:
    """The Message: the JSON body, or the stream assembled."""
    return reading.answer(exchange, assemble_view, None)
