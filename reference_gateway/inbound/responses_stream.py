"""A chat flow's chunk stream as OpenAI Responses events, pure (OpenAI API reference: Responses, Streaming events;
specs/responses/responses-contract.md "Streaming"): the items the bridge answers with (responses_bridge.py), each
added, grown by its deltas and done as the chunks come, never held until the answer ends.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reference_gateway.inbound import custom_tools, reasoning_items
from reference_gateway.inbound.responses_bridge import (
    call_item,
    custom_call_item,
    finish_response,
    message_item,
    new_id,
    response_shell,
    usage,
)

_PREFIX = {"message": "msg", "function_call": "fc", "custom_tool_call": "ctc"}


def event(kind: str, data: Mapping[str, Any], sequence: int) -> bytes:
    payload = {"type": kind, "sequence_number": sequence, **data}
    return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


@dataclass
class _Open:
    """An output item being streamed: its index, id, kind and what has arrived so far."""

    index: int
    id: str
    kind: str  # "message" | "function_call" | "custom_tool_call" | "reasoning"
    call_id: str = ""
    name: str = ""
    text: list[str] = field(
        default_factory=list
    )  # text, arguments, a custom call's input, a reasoning summary
    decoder: custom_tools.InputDecoder | None = (
        None  # a custom call's: its arguments' JSON to its input's text
    )
    blocks: list[dict[str, Any]] = field(default_factory=list)  # a reasoning item's
    summary_open: bool = False  # a reasoning item's summary part was added


@dataclass
class StreamBridge:
    """Chat chunks in, Responses events out: response.created and in_progress first; a reasoning item for the
    provider's reasoning (its summary deltas when the client asked for a summary, its blocks sealed when done); a
    message item with one output_text part for the text; a function_call item per call, or a custom_tool_call item
    for a custom tool's call (its input's text as `response.custom_tool_call_input` deltas); each added, its deltas,
    done; then response.completed (or incomplete) with the whole output and the usage. An error chunk becomes an
    `error` event and response.failed. Every event carries its type as its SSE event name and a sequence_number
    that starts at 0 and grows by one."""

    body: Mapping[str, Any]
    response_id: str
    store: bool = False
    sequence: int = 0
    shell: dict[str, Any] | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    current: _Open | None = None
    reasoning: _Open | None = None  # the reasoning item being streamed
    calls: dict[Any, _Open] = field(default_factory=dict)  # chat tool-call index -> its item
    finish: Any = None
    usage: dict[str, Any] | None = None
    finished: bool = False
    final: dict[str, Any] | None = None  # the terminal response, once sent

    def __post_init__(self) -> None:
        self.custom = custom_tools.names(self.body.get("tools"))
        self.summarized = reasoning_items.summarized(self.body)

    def _emit(self, kind: str, data: Mapping[str, Any]) -> bytes:
        out = event(kind, data, self.sequence)
        self.sequence += 1
        return out

    def _start(self, chunk: Mapping[str, Any]) -> list[bytes]:
        if self.shell is not None:
            return []
        model = str(chunk.get("model") or self.body.get("model"))
        self.shell = response_shell(
            self.body, self.response_id, model, int(chunk.get("created") or time.time()), self.store
        )
        return [
            self._emit("response.created", {"response": dict(self.shell)}),
            self._emit("response.in_progress", {"response": dict(self.shell)}),
        ]

    def feed(self, chunk: Any) -> list[bytes]:
        if not isinstance(chunk, dict) or self.finished:
            return []
        out = self._start(chunk)
        if isinstance(chunk.get("error"), dict):
            return out + self._fail(chunk["error"])
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta: dict[str, Any] = choice["delta"] if isinstance(choice.get("delta"), dict) else {}
            thought = delta.get("reasoning_content")
            if isinstance(thought, str) and thought and self.summarized:
                out += self._thought(thought)
            blocks = delta.get("reasoning_blocks")
            if isinstance(blocks, list) and blocks:
                out += self._blocks([b for b in blocks if isinstance(b, dict)])
            text = delta.get("content")
            if isinstance(text, str) and text:
                out += self._text(text)
            for call in delta.get("tool_calls") or []:
                out += self._call(call)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        return out

    def end(self) -> list[bytes]:
        if self.finished:
            return []
        out = self._start({}) + self._close_all()
        self.finished = True
        assert self.shell is not None
        shell = dict(self.shell)
        shell["output"] = list(self.items)
        shell["usage"] = self.usage or usage({})
        finish_response(shell, self.finish)
        terminal = "response.completed" if shell["status"] == "completed" else "response.incomplete"
        out.append(self._emit(terminal, {"response": shell}))
        self.final = shell
        return out

    def _fail(self, error: Mapping[str, Any]) -> list[bytes]:
        out: list[bytes] = []  # items cut by the failure stay as they were: in_progress, not done
        self.finished = True
        message = str(error.get("message") or "The upstream provider's stream failed.")
        code = error.get("code") if isinstance(error.get("code"), str) else "server_error"
        out.append(self._emit("error", {"code": code, "message": message, "param": None}))
        assert self.shell is not None
        shell = dict(self.shell)
        shell["status"] = "failed"
        shell["output"] = [item for item in self.items if item]
        shell["error"] = {"code": code, "message": message}
        out.append(self._emit("response.failed", {"response": shell}))
        return out

    def _open(self, kind: str, call_id: str = "", name: str = "") -> tuple[_Open, list[bytes]]:
        # A new message or reasoning item closes everything open; a new call closes an open message or reasoning
        # item only (the calls of one answer may stream side by side, each event naming its item and output_index).
        if kind in ("message", "reasoning"):
            out = self._close_all()
        else:
            out = self._close(self.current) + self._close(self.reasoning)
        prefix = _PREFIX.get(kind)
        opened = _Open(
            index=len(self.items),
            id=new_id(prefix) if prefix else reasoning_items.new_id(),
            kind=kind,
            call_id=call_id,
            name=name,
        )
        if kind == "message":
            self.current = opened
            item = message_item(opened.id, "", "in_progress")
            item["content"] = []
            out.append(self._emit("response.output_item.added", {"output_index": opened.index, "item": item}))
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            out.append(self._emit("response.content_part.added", {
                "item_id": opened.id, "output_index": opened.index, "content_index": 0, "part": part}))  # fmt: skip
        elif kind == "reasoning":
            self.reasoning = opened
            item = {"type": "reasoning", "id": opened.id, "summary": []}
            out.append(self._emit("response.output_item.added", {"output_index": opened.index, "item": item}))
        elif kind == "custom_tool_call":
            opened.decoder = custom_tools.InputDecoder()
            item = custom_call_item(opened.id, opened.call_id, opened.name, "", "in_progress")
            out.append(self._emit("response.output_item.added", {"output_index": opened.index, "item": item}))
        else:
            item = call_item(opened.id, opened.call_id, opened.name, "", "in_progress")
            out.append(self._emit("response.output_item.added", {"output_index": opened.index, "item": item}))
        # A placeholder keeps output_index order; the finished item replaces it when the item is done.
        self.items.append({})
        return opened, out

    def _close_all(self) -> list[bytes]:
        out = self._close(self.reasoning) + self._close(self.current)
        for opened in sorted(self.calls.values(), key=lambda o: o.index):
            out += self._close(opened)
        return out

    def _close(self, opened: _Open | None) -> list[bytes]:
        if opened is None or self.items[opened.index]:
            return []  # nothing open, or already done
        if opened is self.current:
            self.current = None
        if opened is self.reasoning:
            self.reasoning = None
        where = {"item_id": opened.id, "output_index": opened.index}
        out: list[bytes] = []
        if opened.kind == "custom_tool_call" and opened.decoder is not None:
            out += self._custom_delta(opened, opened.decoder.finish())
        joined = "".join(opened.text)
        if opened.kind == "message":
            part = {"type": "output_text", "text": joined, "annotations": [], "logprobs": []}
            out.append(self._emit("response.output_text.done", {**where, "content_index": 0, "text": joined,
                                                                "logprobs": []}))  # fmt: skip
            out.append(self._emit("response.content_part.done", {**where, "content_index": 0, "part": part}))
            item = message_item(opened.id, joined, "completed")
        elif opened.kind == "reasoning":
            if opened.summary_open:
                part = {"type": "summary_text", "text": joined}
                out.append(self._emit("response.reasoning_summary_text.done", {**where, "summary_index": 0,
                                                                               "text": joined}))  # fmt: skip
                out.append(self._emit("response.reasoning_summary_part.done", {**where, "summary_index": 0,
                                                                               "part": part}))  # fmt: skip
            item = {"type": "reasoning", "id": opened.id, "summary": reasoning_items.summary(joined),
                    "encrypted_content": reasoning_items.seal(opened.blocks)}  # fmt: skip
        elif opened.kind == "custom_tool_call":
            out.append(self._emit("response.custom_tool_call_input.done", {**where, "input": joined}))
            item = custom_call_item(opened.id, opened.call_id, opened.name, joined, "completed")
        else:
            out.append(self._emit("response.function_call_arguments.done", {**where, "arguments": joined}))
            item = call_item(opened.id, opened.call_id, opened.name, joined, "completed")
        self.items[opened.index] = item
        out.append(self._emit("response.output_item.done", {"output_index": opened.index, "item": item}))
        return out

    def _text(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        opened = self.current
        if opened is None:
            opened, out = self._open("message")
        opened.text.append(text)
        out.append(self._emit("response.output_text.delta", {
            "item_id": opened.id, "output_index": opened.index, "content_index": 0, "delta": text,
            "logprobs": []}))  # fmt: skip
        return out

    def _reasoning_item(self) -> tuple[_Open, list[bytes]]:
        if self.reasoning is not None:
            return self.reasoning, []
        return self._open("reasoning")

    def _thought(self, text: str) -> list[bytes]:
        """The provider's visible thinking, as the reasoning item's summary text (asked for by the client)."""
        opened, out = self._reasoning_item()
        where = {"item_id": opened.id, "output_index": opened.index, "summary_index": 0}
        if not opened.summary_open:
            opened.summary_open = True
            part = {"type": "summary_text", "text": ""}
            out.append(self._emit("response.reasoning_summary_part.added", {**where, "part": part}))
        opened.text.append(text)
        out.append(self._emit("response.reasoning_summary_text.delta", {**where, "delta": text}))
        return out

    def _blocks(self, blocks: list[dict[str, Any]]) -> list[bytes]:
        """Reasoning blocks, each whole (a signed thinking block at its end, a thought signature): kept in the
        reasoning item's encrypted_content when it is done."""
        opened, out = self._reasoning_item()
        opened.blocks.extend(blocks)
        return out

    def _custom_delta(self, opened: _Open, piece: str) -> list[bytes]:
        if not piece:
            return []
        opened.text.append(piece)
        return [self._emit("response.custom_tool_call_input.delta", {
            "item_id": opened.id, "output_index": opened.index, "delta": piece})]  # fmt: skip

    def _call(self, call: Any) -> list[bytes]:
        if not isinstance(call, dict):
            return []
        position = call.get("index", 0)
        function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
        out: list[bytes] = []
        opened = self.calls.get(position)
        if opened is None:
            name = str(function.get("name"))
            kind = "custom_tool_call" if name in self.custom else "function_call"
            opened, out = self._open(kind, call_id=str(call.get("id") or new_id("call")), name=name)
            self.calls[position] = opened
        arguments = function.get("arguments")
        if not isinstance(arguments, str) or not arguments:
            return out
        if opened.decoder is not None:  # a custom tool's: the input's text, as it arrives
            return out + self._custom_delta(opened, opened.decoder.feed(arguments))
        opened.text.append(arguments)
        out.append(self._emit("response.function_call_arguments.delta", {
            "item_id": opened.id, "output_index": opened.index, "delta": arguments}))  # fmt: skip
        return out
