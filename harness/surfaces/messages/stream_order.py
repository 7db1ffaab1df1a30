"""`stream_order` for Messages: the event grammar of a Messages stream (Anthropic, "Streaming Messages": the event
flow; docs/wire-reference.md §1.5), as specs/anthropic/contract.md states it:

- every event carries `event:` equal to its data's `type` (anthropic-python dispatches on the event name and
  yields nothing for data under another name), and its data is a JSON object;
- `message_start` first (pings aside), once, with the message's id, model, role and usage;
- each content block started at the next index, grown only by the deltas of its type, and stopped; the
  `input_json_delta` fragments of a tool use join to a JSON object; a thinking block gets its signature before
  it stops;
- then `message_delta` with the stop reason and the usage, then `message_stop`, and nothing after it;
- `ping` anywhere; an event type the grammar does not know is tolerated (Anthropic may add event types);
- an `error` event ends the stream (`{error: true}`: the rule expects one; otherwise none may come).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.messages import reading as messages
from harness.values import short
from harness.violation import Violation

STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                "model_context_window_exceeded")  # fmt: skip


@dataclass
class _Walk:
    violations: list[Violation] = field(default_factory=list)
    started: bool = False
    open: dict[int, dict[str, Any]] = field(default_factory=dict)  # index -> its block, while open
    stopped: list[int] = field(default_factory=list)
    pieces: dict[int, list[str]] = field(default_factory=dict)
    signed: set[int] = field(default_factory=set)
    tool_ids: set[str] = field(default_factory=set)
    next_index: int = 0
    delta_seen: bool = False
    stop_seen: bool = False
    error_seen: bool = False

    def add(self, where: str, expected: Any, actual: Any, message: str) -> None:
        self.violations.append(Violation("stream_order", where, short(expected), short(actual), message))


def check_stream_order(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    options = expected if isinstance(expected, Mapping) else {}
    found = reading.stream_or_violation("stream_order", exchange)
    if isinstance(found, Violation):
        yield found
        return
    walk = _Walk()
    for payload in found.payloads:
        _event(walk, payload)
    wants_error = options.get("error") is True
    if wants_error and not walk.error_seen:
        walk.add("stream", "an error event", None, "the stream ends without the error event the rule expects")
    if walk.error_seen and not wants_error:
        # an error event where the provider sent a whole answer: the stream failed (audit D15)
        walk.add(
            "stream",
            "message_delta and message_stop",
            "error",
            "the stream ends with an error event the rule does not expect",
        )
    if not walk.error_seen:
        if not walk.started:
            walk.add("stream", "message_start", None, "the stream has no message_start")
        elif not walk.stop_seen:
            walk.add("stream", "message_stop", None, "the stream ends without message_stop (cut short)")
    yield from walk.violations


def _event(walk: _Walk, payload: reading.Payload) -> None:
    where = f"stream[{payload.event.index}]"
    name = payload.event.event
    if payload.event.data is None:
        return  # a comment or an empty event
    data = payload.json
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        walk.add(
            where,
            "a JSON object with a type",
            short(payload.event.data),
            "event data is not a typed JSON object",
        )
        return
    kind = data["type"]
    if name != kind:
        walk.add(f"{where}.event", kind, name,
                 "the `event:` name is not the data's type (the SDKs dispatch on the name)")  # fmt: skip
    if kind == messages.PING:
        return
    if walk.error_seen:
        walk.add(where, "nothing after the error event", kind, "an event after the stream's error event")
        return
    if walk.stop_seen:
        walk.add(where, "nothing after message_stop", kind, "an event after message_stop")
        return
    if kind == messages.ERROR:
        walk.error_seen = True
        error = data.get("error")
        if (
            not isinstance(error, dict)
            or not isinstance(error.get("type"), str)
            or not isinstance(error.get("message"), str)
        ):
            walk.add(
                f"{where}.error",
                {"type": "…", "message": "…"},
                error,
                "the error event has no error type and message",
            )
        return
    if kind not in messages.KNOWN:
        return  # tolerated: Anthropic may add event types, and clients are told to ignore unknown ones
    if kind == messages.MESSAGE_START:
        _message_start(walk, where, data)
        return
    if not walk.started:
        walk.add(where, "message_start first", kind, f"{kind} before message_start")
        walk.started = True  # one violation, not one per event
    if kind == messages.BLOCK_START:
        _block_start(walk, where, data)
    elif kind == messages.BLOCK_DELTA:
        _block_delta(walk, where, data)
    elif kind == messages.BLOCK_STOP:
        _block_stop(walk, where, data)
    elif kind == messages.MESSAGE_DELTA:
        _message_delta(walk, where, data)
    elif kind == messages.MESSAGE_STOP:
        if not walk.delta_seen:
            walk.add(where, "message_delta before message_stop", kind, "message_stop without a message_delta")
        walk.stop_seen = True


def _message_start(walk: _Walk, where: str, data: dict[str, Any]) -> None:
    if walk.started:
        walk.add(where, "one message_start", "another", "a second message_start")
        return
    walk.started = True
    message = data.get("message")
    if not isinstance(message, dict):
        walk.add(f"{where}.message", "a message object", message, "message_start carries no message")
        return
    for key, wanted in (("id", str), ("model", str)):
        if not isinstance(message.get(key), wanted) or not message.get(key):
            walk.add(
                f"{where}.message.{key}",
                "a non-empty string",
                message.get(key),
                f"message_start has no {key}",
            )
    if message.get("type") != "message":
        walk.add(
            f"{where}.message.type",
            "message",
            message.get("type"),
            "message_start's message is not a message",
        )
    if message.get("role") != "assistant":
        walk.add(
            f"{where}.message.role", "assistant", message.get("role"), "message_start's role is not assistant"
        )
    usage = message.get("usage")
    if not isinstance(usage, dict) or not _count(usage.get("input_tokens")):
        walk.add(f"{where}.message.usage.input_tokens", "an integer", reading.as_object(usage).get("input_tokens"),
                 "message_start's usage has no input_tokens")  # fmt: skip


def _block_start(walk: _Walk, where: str, data: dict[str, Any]) -> None:
    index: Any = data.get("index")
    block: Any = data.get("content_block")
    if walk.delta_seen:
        walk.add(
            where,
            "content blocks before message_delta",
            "content_block_start",
            "a block starts after message_delta",
        )
    if not _count(index) or index != walk.next_index:
        walk.add(f"{where}.index", walk.next_index, index, "blocks start at index 0 and go up by one")
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        walk.add(
            f"{where}.content_block", "a typed block", block, "content_block_start carries no typed block"
        )
        block = {}
    if _count(index):
        walk.open[index] = block
        walk.next_index = max(walk.next_index, index + 1)
    if block.get("type") in messages.INPUT_BLOCKS:
        tool_id = block.get("id")
        if not isinstance(tool_id, str) or not tool_id or tool_id in walk.tool_ids:
            walk.add(f"{where}.content_block.id", "a tool use id of its own", tool_id,
                     "a tool use without an id, or with the id of an earlier one")  # fmt: skip
        walk.tool_ids.add(str(tool_id))
    if block.get("type") in messages.INPUT_BLOCKS and block.get("input") not in ({}, None):
        walk.add(f"{where}.content_block.input", {}, block.get("input"),
                 "a tool use starts with an empty input and streams it as input_json_delta")  # fmt: skip


def _block_delta(walk: _Walk, where: str, data: dict[str, Any]) -> None:
    index: Any = data.get("index")
    delta: Any = data.get("delta")
    block = walk.open.get(index) if _count(index) else None
    if block is None:
        walk.add(f"{where}.index", "an open block", index,
                 "a delta for a block that was never started or is already stopped")  # fmt: skip
        return
    if not isinstance(delta, dict) or not isinstance(delta.get("type"), str):
        walk.add(f"{where}.delta", "a typed delta", delta, "content_block_delta carries no typed delta")
        return
    allowed = messages.DELTAS_OF.get(str(block.get("type")))
    kind = delta["type"]
    if allowed is not None and kind not in allowed:
        walk.add(f"{where}.delta.type", list(allowed), kind, f"a {kind} inside a {block.get('type')} block")
        return
    field_of = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking",
                "signature_delta": "signature"}  # fmt: skip
    if kind in field_of and not isinstance(delta.get(field_of[kind]), str):
        walk.add(
            f"{where}.delta.{field_of[kind]}",
            "a string",
            delta.get(field_of[kind]),
            f"{kind} without its text",
        )
        return
    if kind == "input_json_delta":
        walk.pieces.setdefault(index, []).append(delta["partial_json"])
    if kind == "signature_delta":
        walk.signed.add(index)
    elif kind == "thinking_delta" and index in walk.signed:
        walk.add(where, "the signature last", kind, "thinking text after the block's signature_delta")


def _block_stop(walk: _Walk, where: str, data: dict[str, Any]) -> None:
    index: Any = data.get("index")
    block = walk.open.pop(index, None) if _count(index) else None
    if block is None:
        walk.add(f"{where}.index", "an open block", index, "content_block_stop for a block that is not open")
        return
    walk.stopped.append(index)
    if block.get("type") in messages.INPUT_BLOCKS:
        joined = "".join(walk.pieces.get(index, []))
        try:
            parsed = json.loads(joined) if joined.strip() else {}
        except ValueError:
            walk.add(f"{where}.input", "fragments that join to JSON", short(joined),
                     "the tool use's input_json_delta fragments do not join to JSON")  # fmt: skip
            return
        if not isinstance(parsed, dict):
            walk.add(
                f"{where}.input", "a JSON object", short(joined), "the tool use's input is not a JSON object"
            )
    if block.get("type") == "thinking" and index not in walk.signed and not block.get("signature"):
        walk.add(where, "a signature_delta before the stop", None,
                 "a thinking block stops without its signature (the next turn would be refused)")  # fmt: skip


def _message_delta(walk: _Walk, where: str, data: dict[str, Any]) -> None:
    if walk.open:
        walk.add(
            where, "every block stopped first", sorted(walk.open), "message_delta while blocks are still open"
        )
    if not walk.delta_seen:
        delta = reading.as_object(data.get("delta"))
        if delta.get("stop_reason") not in STOP_REASONS:
            walk.add(f"{where}.delta.stop_reason", list(STOP_REASONS), delta.get("stop_reason"),
                     "the message_delta has no documented stop_reason")  # fmt: skip
    walk.delta_seen = True
    usage = data.get("usage")
    if not isinstance(usage, dict) or not _count(usage.get("output_tokens")):
        walk.add(f"{where}.usage.output_tokens", "an integer", reading.as_object(usage).get("output_tokens"),
                 "message_delta's usage has no output_tokens")  # fmt: skip


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
