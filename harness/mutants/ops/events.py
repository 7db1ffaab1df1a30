"""SSE events as the mutating proxy sees them: split from a buffer, parsed, named by kind (a role chunk, a
finish chunk, `[DONE]`, a Messages event), selected, and edited with the JSON edits. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.mutants.ops.edits import Context, apply_edits


@dataclass(frozen=True)
class SseEvent:
    """One SSE block: its lines without line endings (a comment line starts with ':')."""

    lines: tuple[str, ...]

    @staticmethod
    def of_data(payload: Any, event: str | None = None) -> SseEvent:
        data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        return SseEvent(((f"event: {event}",) if event else ()) + (f"data: {data}",))

    @property
    def data(self) -> str | None:
        parts = [ln[5:].removeprefix(" ") for ln in self.lines if ln.startswith("data:")]
        return "\n".join(parts) if parts else None

    @property
    def is_comment(self) -> bool:
        return bool(self.lines) and all(ln.startswith(":") for ln in self.lines)

    def json(self) -> Any:
        data = self.data
        if data is None or data == "[DONE]":
            return None
        try:
            return json.loads(data)
        except ValueError:
            return None

    def with_json(self, payload: Any) -> SseEvent:
        data = json.dumps(payload, separators=(",", ":"))
        others = tuple(ln for ln in self.lines if not ln.startswith("data:"))
        return SseEvent((*others, f"data: {data}"))

    def encode(self) -> bytes:
        return ("\n".join(self.lines) + "\n\n").encode("utf-8")


def split_sse(buffer: bytes) -> tuple[list[bytes], bytes]:
    """Complete event blocks (without the blank line) and the unfinished rest."""
    text = buffer.replace(b"\r\n", b"\n")
    parts = text.split(b"\n\n")
    return [p for p in parts[:-1]], parts[-1]


def parse_block(block: bytes) -> SseEvent:
    return SseEvent(tuple(block.decode("utf-8", errors="replace").split("\n")))


def kind_of(event: SseEvent) -> str:
    """done | error | comment | usage | finish | role | tool | content | other (OpenAI chunks), or the
    Anthropic `type` of the data, prefixed `type:`."""
    if event.is_comment:
        return "comment"
    if event.data == "[DONE]":
        return "done"
    doc = event.json()
    if not isinstance(doc, dict):
        return "other"
    if "error" in doc:
        return "error"
    if isinstance(doc.get("type"), str):
        return "type:" + str(doc["type"])
    choices = doc.get("choices")
    if choices == [] and doc.get("usage"):
        return "usage"
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        delta = choice.get("delta") or {}
        if choice.get("finish_reason") is not None:
            return "finish"
        if "role" in delta:
            return "role"
        if delta.get("tool_calls"):
            return "tool"
        if isinstance(delta.get("content"), str):
            return "content"
    return "other"


def selected(event: SseEvent, select: Any, index: int) -> bool:
    """`select`: all | first | a kind (finish, usage, …, type:message_delta) | a list of those."""
    if select in (None, "all"):
        return True
    if isinstance(select, list):
        return any(selected(event, s, index) for s in select)
    if select == "first":
        return index == 0
    return bool(kind_of(event) == select)


def edit_event(event: SseEvent, edits: Sequence[Mapping[str, Any]], index: int, ctx: Context) -> SseEvent:
    """Apply the edits whose `select` matches to the event's JSON data (other events pass unchanged)."""
    doc = event.json()
    if doc is None:
        return event
    wanted = [e for e in edits if selected(event, e.get("select"), index)]
    if not wanted:
        return event
    new = apply_edits(doc, wanted, Context(ctx.client, ctx.status, index))
    return event if new == doc else event.with_json(new)
