"""`stream_order` for Responses: the event grammar of a Responses stream (OpenAI API reference: Responses,
"Streaming events"; specs/responses/contract.md "Streaming"), and what the events add up to.

1. framing: `text/event-stream`; every payload a JSON object with a string `type`; an `event:` name, when sent,
   equal to the data's `type` (`done`: a `data: [DONE]` line is `optional` (OpenAI sends none, Open Responses asks
   for one; openai-python stops at it), `required` or `forbidden`);
2. `sequence_number`: an integer on every event, 0 on the first, each one more than the one before;
3. order: `response.created` first (`response.queued` and `response.in_progress` may follow it); an output item
   is added (each `output_index` above the earlier ones) before its parts and deltas, a content part is added before its
   deltas, each delta names the item (`item_id`, `output_index`, `content_index`) it belongs to, an item's `.done`
   events close it and nothing of it follows;
4. accumulation: the text deltas of a part join to its `output_text.done` text, to the part's `content_part.done`
   and to the item's `output_item.done`; a call's argument deltas join to its `function_call_arguments.done` and to
   the item's `arguments`, a custom tool call's input deltas to its `custom_tool_call_input.done` and to the item's
   `input`;
5. the end: exactly one terminal event, `response.completed`, `response.incomplete` or `response.failed`, last;
   its response has the id of `response.created`'s, the status its name says, and as `output` the items done, in
   order; an `error` event (`error: true`) ends the stream or is followed by `response.failed` only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.responses import reading as r
from harness.values import json_equal, short
from harness.violation import Violation

_ITEM_EVENTS = (r.PART_ADDED, r.PART_DONE, r.TEXT_DELTA, r.TEXT_DONE, r.REFUSAL_DELTA, r.REFUSAL_DONE,
                r.ARGS_DELTA, r.ARGS_DONE, r.CUSTOM_DELTA, r.CUSTOM_DONE)  # fmt: skip
# A call's streamed input: its deltas, its done event, the field of the done event and of the done item they join
# to, and the item type they belong to (a function call's JSON arguments; a custom tool's freeform input, as Codex's
# apply_patch: openai-python 3.57 `ResponseCustomToolCallInputDeltaEvent`, `...DoneEvent`).
_CALL_INPUT = {
    r.ARGS_DELTA: ("function_call", "arguments"), r.ARGS_DONE: ("function_call", "arguments"),
    r.CUSTOM_DELTA: ("custom_tool_call", "input"), r.CUSTOM_DONE: ("custom_tool_call", "input"),
}  # fmt: skip
_START = (r.CREATED, r.QUEUED, r.IN_PROGRESS)


@dataclass
class _Item:
    index: int
    id: Any
    kind: Any
    at: str
    done: bool = False
    parts: dict[int, list[str]] = field(default_factory=dict)  # content_index -> text deltas
    parts_done: dict[int, str] = field(default_factory=dict)  # content_index -> the .done text
    open_parts: set[int] = field(default_factory=set)
    arguments: list[str] = field(default_factory=list)  # a call's argument (or custom input) deltas
    arguments_done: str | None = None
    final: Any = None  # the item of output_item.done


@dataclass
class _State:
    violations: list[Violation] = field(default_factory=list)
    items: dict[int, _Item] = field(default_factory=dict)
    by_id: dict[Any, _Item] = field(default_factory=dict)
    created: Any = None  # response.created's response
    terminal_at: str | None = None
    error_at: str | None = None

    def add(self, path: str, expected: Any, actual: Any, message: str) -> None:
        self.violations.append(Violation("stream_order", path, short(expected), short(actual), message))


def check_stream_order(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    options = expected if isinstance(expected, Mapping) else {}
    found = reading.stream_or_violation("stream_order", exchange, "[DONE]")
    if isinstance(found, Violation):
        yield found
        return
    state = _State()
    response = exchange.response
    # The content type is the HTTP transport's; over a WebSocket each event is a message of its own.
    if exchange.request.transport == "http" and reading.content_type(response) != "text/event-stream":
        state.add("content-type", "text/event-stream", response.headers.get("content-type"),
                  "a stream with the wrong content type")  # fmt: skip
    if response.transport_error:
        state.add("stream", "a complete stream", response.transport_error,
                  f"the stream was cut: {response.transport_error}")  # fmt: skip
    view = found
    for problem in view.decoded.problems:
        where = f"stream[{problem.event}]" if problem.event is not None else f"stream@{problem.offset}"
        state.add(where, "well-formed SSE", problem.kind, f"{problem.message} (byte {problem.offset})")
    events = _framing(view, state, options.get("done", "optional"))
    _sequence(events, state)
    _walk(events, state)
    _ending(events, state, options.get("error", False) is True)
    yield from state.violations


def _framing(view: reading.StreamView, state: _State, done: str) -> list[tuple[str, dict[str, Any]]]:
    """The events as (where, data), framing problems recorded; the sentinel checked against `done`."""
    events: list[tuple[str, dict[str, Any]]] = []
    sentinels = [p for p in view.payloads if p.done]
    if done == "required" and not sentinels:
        state.add("stream", "data: [DONE] last", None, "the stream has no data: [DONE]")
    if done == "forbidden" and sentinels:
        state.add(f"stream[{sentinels[0].event.index}]", "no [DONE]", "[DONE]", "a data: [DONE] line")
    if sentinels and sentinels[-1] is not view.payloads[-1]:
        state.add(f"stream[{sentinels[-1].event.index}]", "[DONE] last", "an event after it",
                  "an event after data: [DONE]")  # fmt: skip
    for payload in view.payloads:
        where = f"stream[{payload.event.index}]"
        if payload.done:
            continue
        if payload.event.data is None:
            state.add(where, "a data: line", [f"{n}: {v}" for n, v in payload.event.fields],
                      "an event without data")  # fmt: skip
            continue
        if payload.parsed is None or not payload.parsed.ok or not isinstance(payload.json, dict):
            state.add(where, "a JSON object", short(payload.event.data), "data is not a JSON object")
            continue
        data: dict[str, Any] = payload.json
        kind = data.get("type")
        if not isinstance(kind, str):
            state.add(f"{where}.type", "a string", kind, "an event without a string type")
            continue
        if payload.event.event is not None and payload.event.event != kind:
            state.add(where, f"event: {kind}", f"event: {payload.event.event}",
                      "the SSE event name differs from the data's type")  # fmt: skip
        events.append((where, data))
    return events


def _sequence(events: list[tuple[str, dict[str, Any]]], state: _State) -> None:
    for expected, (where, data) in enumerate(events):
        number = data.get("sequence_number")
        if not isinstance(number, int) or isinstance(number, bool):
            state.add(
                f"{where}.sequence_number", expected, number, "an event without an integer sequence_number"
            )
            return
        if number != expected:
            state.add(f"{where}.sequence_number", expected, number,
                      "sequence_number does not start at 0 and grow by one")  # fmt: skip
            return


def _walk(events: list[tuple[str, dict[str, Any]]], state: _State) -> None:
    for position, (where, data) in enumerate(events):
        kind = data["type"]
        if position == 0 and kind != r.CREATED:
            state.add(where, r.CREATED, kind, "the first event is not response.created")
        if kind == r.CREATED:
            if position != 0:
                state.add(where, "response.created only first", kind, "response.created after other events")
            state.created = data.get("response")
            continue
        if kind in _START:
            started = reading.as_object(data.get("response"))
            created = reading.as_object(state.created)
            if created and started.get("id") != created.get("id"):
                state.add(f"{where}.response.id", created.get("id"), started.get("id"),
                          f"{kind} names another response than response.created (openai-python raises "
                          "\"Lifecycle response identity changed\")")  # fmt: skip
            continue
        if state.terminal_at is not None:
            state.add(where, "nothing after the terminal event", kind,
                      f"an event after the terminal event ({state.terminal_at})")  # fmt: skip
        if kind == r.ERROR:
            state.error_at = state.error_at or where
            continue
        if state.error_at is not None and kind != r.FAILED:
            state.add(where, "response.failed or nothing after an error event", kind,
                      f"an event after the error event ({state.error_at})")  # fmt: skip
        if kind == r.ITEM_ADDED:
            _added(where, data, state)
        elif kind == r.ITEM_DONE:
            _item_done(where, data, state)
        elif kind in _ITEM_EVENTS:
            _item_event(where, kind, data, state)
        elif kind in r.TERMINAL:
            state.terminal_at = state.terminal_at or where
            _terminal(where, kind, data, state)


def _added(where: str, data: dict[str, Any], state: _State) -> None:
    index, item = data.get("output_index"), data.get("item")
    if not isinstance(item, dict):
        state.add(f"{where}.item", "an object", item, "output_item.added without an item")
        return
    # Each new item's output_index is above every earlier one (openai-python's helper tolerates gaps, "when a
    # provider emits an empty added event", but raises on a repeated index).
    last = max(state.items, default=-1)
    if not isinstance(index, int) or isinstance(index, bool) or index <= last:
        state.add(f"{where}.output_index", f"an integer above {last}", index,
                  "an output item added with an output_index that is not above the earlier ones")  # fmt: skip
    if not isinstance(item.get("id"), str) or not item["id"]:
        state.add(f"{where}.item.id", "a non-empty string", item.get("id"), "an output item without an id")
    if item.get("id") in state.by_id:
        state.add(f"{where}.item.id", "an id of its own", item.get("id"), "two output items share an id")
    if not isinstance(item.get("type"), str):
        state.add(f"{where}.item.type", "a string", item.get("type"), "an output item without a type")
    added = _Item(
        len(state.items) if not isinstance(index, int) else index, item.get("id"), item.get("type"), where
    )
    state.items[added.index] = added
    state.by_id[added.id] = added


def _owner(where: str, data: dict[str, Any], state: _State) -> _Item | None:
    item = state.by_id.get(data.get("item_id"))
    if item is None:
        state.add(f"{where}.item_id", "the id of an added output item", data.get("item_id"),
                  "an event for an item that was never added")  # fmt: skip
        return None
    if data.get("output_index") != item.index:
        state.add(f"{where}.output_index", item.index, data.get("output_index"),
                  f"output_index differs from its item's ({item.at})")  # fmt: skip
    if item.done:
        state.add(where, "nothing after the item's output_item.done", data.get("type"),
                  "an event for an item already done")  # fmt: skip
    return item


def _item_event(where: str, kind: str, data: dict[str, Any], state: _State) -> None:
    item = _owner(where, data, state)
    if item is None:
        return
    if kind in _CALL_INPUT:
        owner, name = _CALL_INPUT[kind]
        if item.kind != owner:
            state.add(where, f"a {owner} item", item.kind, f"{kind} for an item that is not a {owner}")
        if kind in (r.ARGS_DELTA, r.CUSTOM_DELTA):
            if not isinstance(data.get("delta"), str):
                state.add(
                    f"{where}.delta", "a string", data.get("delta"), f"a {name} delta that is not a string"
                )
            else:
                item.arguments.append(data["delta"])
            return
        joined = "".join(item.arguments)
        if data.get(name) != joined:
            state.add(f"{where}.{name}", short(joined), short(data.get(name)),
                      f"{kind} differs from its deltas joined")  # fmt: skip
        item.arguments_done = data.get(name) if isinstance(data.get(name), str) else joined
        return
    content = data.get("content_index")
    if not isinstance(content, int) or isinstance(content, bool):
        state.add(f"{where}.content_index", "an integer", content, "a content event without a content_index")
        return
    if kind == r.PART_ADDED:
        if content in item.parts:
            state.add(f"{where}.content_index", "a part added once", content, "a content part added twice")
        item.parts[content] = []
        item.open_parts.add(content)
        return
    if content not in item.parts:
        state.add(f"{where}.content_index", "a part added before its events", content,
                  f"{kind} for a content part that was never added")  # fmt: skip
        item.parts[content] = []
    if content not in item.open_parts:
        state.add(
            where, "nothing after the part's content_part.done", kind, "an event for a part already done"
        )
    if kind in (r.TEXT_DELTA, r.REFUSAL_DELTA):
        if not isinstance(data.get("delta"), str):
            state.add(f"{where}.delta", "a string", data.get("delta"), "a text delta that is not a string")
        else:
            item.parts[content].append(data["delta"])
    elif kind in (r.TEXT_DONE, r.REFUSAL_DONE):
        joined = "".join(item.parts[content])
        field_name = "text" if kind == r.TEXT_DONE else "refusal"
        if data.get(field_name) != joined:
            state.add(f"{where}.{field_name}", short(joined), short(data.get(field_name)),
                      f"{kind} differs from its deltas joined")  # fmt: skip
        item.parts_done[content] = joined
    elif kind == r.PART_DONE:
        if item.kind == "message" and content not in item.parts_done:
            state.add(where, "response.output_text.done before content_part.done", kind,
                      "a content part done without its output_text.done (clients that listen for it get nothing)")  # fmt: skip
        part = reading.as_object(data.get("part"))
        text = part.get("text", part.get("refusal"))
        done = item.parts_done.get(content, "".join(item.parts[content]))
        if text != done:
            state.add(
                f"{where}.part", short(done), short(text), "content_part.done differs from the part's text"
            )
        item.open_parts.discard(content)


def _item_done(where: str, data: dict[str, Any], state: _State) -> None:
    index, final = data.get("output_index"), data.get("item")
    item = state.items.get(index) if isinstance(index, int) else None
    if item is None or not isinstance(final, dict):
        state.add(
            where, "the done of an added item", short(final), "output_item.done for an item never added"
        )
        return
    if item.done:
        state.add(where, "one output_item.done per item", index, "an item done twice")
    item.done = True
    item.final = final
    if final.get("id") != item.id:
        state.add(
            f"{where}.item.id", item.id, final.get("id"), "the done item's id differs from the added one"
        )
    if item.open_parts:
        state.add(where, "every content part done first", sorted(item.open_parts),
                  "output_item.done before its content parts are done")  # fmt: skip
    if item.kind in ("function_call", "custom_tool_call"):
        name = "arguments" if item.kind == "function_call" else "input"
        joined = item.arguments_done if item.arguments_done is not None else "".join(item.arguments)
        if final.get(name) != joined:
            state.add(f"{where}.item.{name}", short(joined), short(final.get(name)),
                      f"the done call's {name} differs from its deltas joined")  # fmt: skip
    elif item.kind == "message":
        content = final.get("content")
        for i, text in sorted(item.parts_done.items()):
            part = content[i] if isinstance(content, list) and i < len(content) else None
            got = reading.as_object(part).get("text", reading.as_object(part).get("refusal"))
            if got != text:
                state.add(f"{where}.item.content[{i}]", short(text), short(got),
                          "the done message's text differs from its deltas joined")  # fmt: skip


def _terminal(where: str, kind: str, data: dict[str, Any], state: _State) -> None:
    response = data.get("response")
    if not isinstance(response, dict):
        state.add(f"{where}.response", "an object", short(response), f"{kind} without its response")
        return
    created = reading.as_object(state.created)
    if created and response.get("id") != created.get("id"):
        state.add(f"{where}.response.id", created.get("id"), response.get("id"),
                  "the terminal response's id differs from response.created's")  # fmt: skip
    if response.get("status") != r.TERMINAL_STATUS[kind]:
        state.add(f"{where}.response.status", r.TERMINAL_STATUS[kind], response.get("status"),
                  f"{kind} carries another status")  # fmt: skip
    if kind == r.FAILED:
        return  # a failed response's output is what was done before the failure, whatever it held
    output = response.get("output")
    finals = [state.items[i].final for i in sorted(state.items)]
    if not isinstance(output, list):
        state.add(
            f"{where}.response.output", "an array", short(output), "the terminal response has no output"
        )
        return
    if len(output) != len(finals) or not all(_same_item(a, b) for a, b in zip(output, finals, strict=False)):
        state.add(f"{where}.response.output", short(json.dumps(finals)), short(json.dumps(output)),
                  "the terminal response's output is not the items done, in order")  # fmt: skip
    for item in state.items.values():
        if not item.done:
            state.add(where, "every item done before the end", item.at, "an output item never done")


def _same_item(a: Any, b: Any) -> bool:
    """The same item, as a client reads it: its type and id, a message's texts, a call's call_id, name and
    arguments (input for a custom tool's), a reasoning item by its type and id alone (a `status` that moved from
    completed to incomplete at the end, an annotation, a re-encrypted `encrypted_content` are not compared:
    openai-python's helper matches the final output to the done items by identity)."""
    a, b = reading.as_object(a), reading.as_object(b)
    if (a.get("type"), a.get("id")) != (b.get("type"), b.get("id")):
        return False
    if a.get("type") == "message":

        def texts(item: dict[str, Any]) -> list[Any]:
            return [
                reading.as_object(p).get("text", reading.as_object(p).get("refusal"))
                for p in item.get("content") or []
            ]

        return texts(a) == texts(b)
    if a.get("type") == "function_call":
        return all(a.get(k) == b.get(k) for k in ("call_id", "name", "arguments"))
    if a.get("type") == "custom_tool_call":
        return all(a.get(k) == b.get(k) for k in ("call_id", "name", "input"))
    if a.get("type") == "reasoning":
        # OpenAI re-encrypts `encrypted_content` on every event that carries it (a live gpt-5 stream: three blobs
        # for one item, audit D3) and gives reasoning items no status: the item is its type and id
        return True
    return json_equal(a, b)


def _ending(events: list[tuple[str, dict[str, Any]]], state: _State, error_expected: bool) -> None:
    kinds = [data["type"] for _, data in events]
    terminals = [k for k in kinds if k in r.TERMINAL]
    if error_expected:
        if state.error_at is None and r.FAILED not in kinds:
            state.add("stream", "an error event or response.failed", kinds[-1:] or None,
                      "the stream ends without an error event or response.failed")  # fmt: skip
        return
    if state.error_at is not None:
        state.add(state.error_at, "no error event", "error", "the stream carries an error event")
    if not terminals:
        state.add("stream", "response.completed, response.incomplete or response.failed", kinds[-1:] or None,
                  "the stream ends without a terminal event (the SDKs' final response is never set)")  # fmt: skip
    elif len(terminals) > 1:
        state.add("stream", "one terminal event", terminals, "more than one terminal event")
