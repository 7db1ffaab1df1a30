"""Stream checks: the chat-completions SSE state machine (`stream_order`; parity is in parity.py).

The state machine is specs/README.md "Stream order"; each step catches bugs from
docs/real-gateway-bugs.md §1-2 (content in the finish chunk, `finish_reason: ""`, repeated
role, 1-based or shared tool indexes, ids on every fragment, usage on every chunk, no `[DONE]`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat
from harness.values import ABSENT, json_equal, json_type, short
from harness.violation import Violation

DEFAULT_FIRST_DELTA: Mapping[str, Any] = {"role": "assistant", "content": ""}
_IDENTITY = ("id", "created", "model", "object")


@dataclass
class _Call:
    id: Any
    first_at: str
    pieces: list[str] = field(default_factory=list)


@dataclass
class _Choice:
    finish_at: str | None = None
    calls: dict[int, _Call] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)


@dataclass
class _State:
    """What the walk over the payloads has seen so far (internal, never escapes a check call)."""

    violations: list[Violation] = field(default_factory=list)
    choices: dict[int, _Choice] = field(default_factory=dict)
    chunks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    usage_at: list[int] = field(default_factory=list)
    finish_events: list[int] = field(default_factory=list)
    errors_at: list[int] = field(default_factory=list)
    # A continuation fragment repeating `type: "function"` is harmless to openai-python (its delta accumulator
    # replaces `type` and `index`, concatenating only the rest: lib/streaming/_deltas.py), unlike a repeated id
    # or name, which it concatenates; judged only where a rule asks (`fragment_type: forbidden`, a SHOULD). So is
    # an empty `name: ""` there (concatenating "" changes nothing; openai-node skips a falsy name): the same SHOULD
    # judges it (TensorZero 2026.6.0 sends one on every continuation, implementations/tensorzero-2026.6.0).
    type_repeat_judged: bool = False
    # The finish chunk's delta empty: EZAT documents it and api.openai.com does it, but openai-python's
    # accumulator reads content there, so profile openai judges it in one SHOULD rule (`finish_delta: any`
    # elsewhere; audit D3).
    finish_delta_judged: bool = True

    def add(self, path: str, expected: Any, actual: Any, message: str) -> None:
        self.violations.append(Violation("stream_order", path, short(expected), short(actual), message))


def check_stream_order(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    options = expected if isinstance(expected, Mapping) else {}
    found = reading.stream_or_violation("stream_order", exchange, chat.DONE)
    if isinstance(found, Violation):
        yield found
        return
    response = exchange.response
    state = _State(
        type_repeat_judged=options.get("fragment_type") == "forbidden",
        finish_delta_judged=options.get("finish_delta", "empty") == "empty",
    )
    if reading.content_type(response) != "text/event-stream":
        state.add(
            "content-type",
            "text/event-stream",
            response.headers.get("content-type"),
            "a stream with the wrong content type",
        )
    if response.transport_error:
        state.add(
            "stream",
            "a complete stream",
            response.transport_error,
            f"the stream was cut: {response.transport_error}",
        )
    if response.truncated:
        state.add(
            "stream", "a complete stream", len(response.raw), "the harness stopped reading at its byte cap"
        )
    view = found
    for problem in view.decoded.problems:
        where = f"stream[{problem.event}]" if problem.event is not None else f"stream@{problem.offset}"
        state.add(where, "well-formed SSE", problem.kind, f"{problem.message} (byte {problem.offset})")
    _comments(options.get("comments", "allowed"), view, state)
    _payload_shapes(view, state, options.get("sse_fields", "forbidden"))
    # Usage on a chunk with choices breaks the one-usage-chunk sentence only where a usage chunk was asked for
    # (include_usage, or a rule that requires one); unasked, it is the SHOULD "no usage unasked" (S32), judged
    # by its own rule and never by a MUST rule that leaves the usage chunk optional (audit D2).
    unasked = options.get("usage_chunk") == "optional" and not chat.requested_usage(exchange)
    _walk(view, state, options.get("first_delta", DEFAULT_FIRST_DELTA), judge_usage=not unasked)
    error_expected = options.get("error", False) is True
    _done(options.get("done", "required"), view, state)
    _identity(state, created_judged=options.get("created", "any") == "constant")
    _tool_arguments(state)
    _ending(view, state, error_expected)
    _usage(options.get("usage_chunk"), exchange, state, error_expected)
    yield from state.violations


def _comments(mode: str, view: reading.StreamView, state: _State) -> None:
    comments = view.decoded.comments
    if mode == "forbidden":
        for comment in comments:
            state.add(
                f"stream@{comment.offset}",
                "no comment lines",
                f": {comment.text}",
                "an SSE comment line (forbidden here)",
            )
    elif mode == "required" and not comments:
        state.add(
            "stream", "at least one `: …` comment line", None, "no SSE comment line (keep-alive) was sent"
        )


def _payload_shapes(view: reading.StreamView, state: _State, sse_fields: str = "forbidden") -> None:
    """Only `data:` fields (or, `sse_fields: sdk`, only the fields the official SDKs survive), every payload a
    JSON object or `[DONE]`."""
    if sse_fields == "sdk":
        _sdk_breaking_fields(view, state)
    for payload in view.payloads:
        event = payload.event
        where = f"stream[{event.index}]"
        for name, value in event.fields:
            if name in ("event", "id", "retry") and sse_fields != "sdk":
                state.add(
                    where,
                    "data: lines only",
                    f"{name}: {value}",
                    f"an SSE `{name}:` field in a chat-completions stream",
                )
        if event.data is None:
            state.add(where, "a data: line", [f"{n}: {v}" for n, v in event.fields], "an event without data")
        elif payload.done:
            continue
        elif payload.parsed is not None and not payload.parsed.ok:
            data = event.data
            hint = " (an SSE comment rewrapped as data?)" if data.lstrip().startswith(":") else ""
            hint = " (empty data)" if data == "" else hint
            hint = " ([DONE] must be exactly `data: [DONE]`)" if "[DONE]" in data else hint
            state.add(where, "a JSON object or [DONE]", data, f"data is not JSON{hint}")
        elif not payload.is_object:
            state.add(
                where,
                "a JSON object",
                payload.json,
                f"data is a JSON {json_type(payload.json)}, not an object",
            )


def _sdk_breaking_fields(view: reading.StreamView, state: _State) -> None:
    """The SSE fields that break openai-python 3.57 or openai-node 7.55 on a chat stream (audit S33).

    - `event: thread.*`: both SDKs yield `{event, data}` instead of the chunk; `event: error` on a chunk:
      openai-node raises APIError with the chunk as the error.
    - `id:`: openai-python keeps the last event id across events (as the SSE spec says), so the blank line
      after a later comment block dispatches an event with empty data, which `sse.json()` cannot parse.
    A block without data (a lone `retry:` or `event:`) breaks both and is judged below for every stream.
    """
    first_id: int | None = None
    for payload in view.payloads:
        event = payload.event
        where = f"stream[{event.index}]"
        name = event.event
        if name is not None and (
            name.startswith("thread.") or (name == "error" and not chat.is_error(payload))
        ):
            state.add(
                where,
                "no thread.* or error event name on a chunk",
                f"event: {name}",
                "an event name the official SDKs treat as another API's event (openai-node raises on `error`; "
                "both wrap `thread.*`)",
            )
        if event.id is not None and first_id is None:
            first_id = event.index
    if first_id is None:
        return
    for comment in view.decoded.comments:
        if comment.before_event > first_id:
            state.add(
                f"stream@{comment.offset}",
                "no comment block after an `id:` field",
                f": {comment.text}",
                f"after the `id:` of stream[{first_id}], openai-python dispatches this comment block as an "
                "event with empty data and fails to parse it",
            )
            return


def _walk(view: reading.StreamView, state: _State, first_delta: Any, judge_usage: bool = True) -> None:
    first_checked = False
    for payload in view.payloads:
        index = payload.event.index
        where = f"stream[{index}]"
        if chat.is_error(payload):
            state.errors_at.append(index)
            continue
        if not chat.is_chunk(payload):
            continue
        chunk: dict[str, Any] = payload.json
        state.chunks.append((index, chunk))
        if state.errors_at:
            state.add(where, "nothing after the error event", short(chunk), "a chunk after the error event")
        choices = chunk.get("choices")
        usage = chunk.get("usage")
        if not isinstance(choices, list):
            state.add(f"{where}.choices", "an array", choices, "choices is not an array")
            continue
        if not choices:
            if isinstance(usage, dict):
                state.usage_at.append(index)
            else:
                state.add(
                    where,
                    "choices: [] only on the usage chunk",
                    usage,
                    "a chunk with no choices and no usage",
                )
            if not first_checked:
                state.add(
                    where,
                    {"delta": first_delta},
                    short(chunk),
                    "the first chunk has no choices (role chunk missing)",
                )
                first_checked = True
            continue
        if usage is not None and judge_usage:
            state.add(
                f"{where}.usage",
                None,
                usage,
                "usage on a chunk with choices (it belongs in one final choices: [] chunk)",
            )
        if state.usage_at:
            state.add(
                where,
                "nothing but [DONE] after the usage chunk",
                short(chunk),
                "a chunk after the usage chunk",
            )
        for position, choice in enumerate(choices):
            _choice(
                state,
                f"{where}.choices[{position}]",
                index,
                position,
                choice,
                None if first_checked else first_delta,
            )
        first_checked = True


def _choice(state: _State, where: str, event: int, position: int, choice: Any, first_delta: Any) -> None:
    if not isinstance(choice, dict):
        state.add(where, "an object", choice, "a choice that is not an object")
        return
    number = choice.get("index")
    if not isinstance(number, int) or isinstance(number, bool):
        state.add(f"{where}.index", position, number, "a choice without an integer index")
        number = position
    started = number in state.choices
    current = state.choices.setdefault(number, _Choice())
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        state.add(f"{where}.delta", "an object", delta, "delta is not an object")
        delta = {}
    if first_delta is not None and isinstance(first_delta, Mapping):
        for key, value in first_delta.items():
            if key not in delta or not json_equal(delta[key], value):
                state.add(
                    f"{where}.delta",
                    dict(first_delta),
                    delta,
                    f"the first chunk's delta lacks {key}: {json.dumps(value)}",
                )
    if started and delta.get("role") is not None:
        state.add(f"{where}.delta.role", None, delta["role"], "delta.role repeated after the first chunk")
    if not started and first_delta is None and delta.get("role") is None:
        state.add(f"{where}.delta.role", "assistant", None, "the choice's first chunk has no delta.role")

    # An absent finish_reason key counts as null here; the `schema` check wants the key itself.
    finish = choice.get("finish_reason")
    if current.finish_at is not None:
        if finish not in (None, ""):
            state.add(
                f"{where}.finish_reason",
                None,
                finish,
                f"a second finish chunk (the first was {current.finish_at})",
            )
        else:
            state.add(
                where,
                "nothing after the finish chunk",
                short(choice),
                f"a chunk after the finish chunk ({current.finish_at})",
            )
    if finish == "":
        state.add(
            f"{where}.finish_reason", None, "", 'finish_reason is "" (null until the finish chunk, never "")'
        )
    elif finish is not None:
        if finish not in chat.FINISH_REASONS:
            state.add(
                f"{where}.finish_reason",
                list(chat.FINISH_REASONS),
                finish,
                f"finish_reason {finish!r} is not an OpenAI value",
            )
        filled = {k: v for k, v in delta.items() if v is not None}
        if filled and state.finish_delta_judged:
            state.add(
                f"{where}.delta",
                {},
                filled,
                "the finish chunk's delta is not empty (clients that stop there lose it)",
            )
        if current.finish_at is None:
            current.finish_at = f"stream[{event}]"
            state.finish_events.append(event)

    content = delta.get("content")
    if content is not None and not isinstance(content, str):
        state.add(f"{where}.delta.content", "a string", content, f"delta.content is a {json_type(content)}")
    calls = delta.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        state.add(f"{where}.delta.tool_calls", "an array", calls, "delta.tool_calls is not an array")
        return
    for j, fragment in enumerate(calls):
        _fragment(state, current, f"{where}.delta.tool_calls[{j}]", fragment)


def _fragment(state: _State, choice: _Choice, where: str, fragment: Any) -> None:
    if not isinstance(fragment, dict):
        state.add(where, "an object", fragment, "a tool-call fragment that is not an object")
        return
    number = fragment.get("index")
    if not isinstance(number, int) or isinstance(number, bool):
        state.add(f"{where}.index", "an integer", number, "a tool-call fragment without an integer index")
        return
    function = fragment.get("function")
    if function is not None and not isinstance(function, dict):
        state.add(f"{where}.function", "an object", function, "function is not an object")
    function = function if isinstance(function, dict) else {}
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        state.add(
            f"{where}.function.arguments",
            "a JSON string",
            arguments,
            f"arguments is a {json_type(arguments)}, not a string",
        )
    name = function.get("name")
    call = choice.calls.get(number)
    if call is None:
        _first_fragment(state, choice, where, number, fragment, name)
        call = choice.calls[number]
    else:
        new_id = fragment.get("id")
        if new_id is not None and new_id != call.id:
            state.add(
                f"{where}.id", call.id, new_id, f"a different id on index {number}: two calls share one index"
            )
        repeated = [k for k in ("id", "type") if fragment.get(k) is not None]
        if not state.type_repeat_judged:
            repeated = [k for k in repeated if k != "type"]
        repeated += ["function.name"] if name else []
        if name == "":
            if state.type_repeat_judged:
                state.add(f"{where}.function.name", None, "", 'function.name "" on a continuation fragment')
        elif repeated and not (new_id is not None and new_id != call.id):
            state.add(
                where,
                "index and function.arguments only",
                short(fragment),
                f"a continuation fragment repeats {', '.join(repeated)}",
            )
    if isinstance(arguments, str):
        call.pieces.append(arguments)


def _first_fragment(
    state: _State, choice: _Choice, where: str, number: int, fragment: dict[str, Any], name: Any
) -> None:
    expected_index = len(choice.calls)
    if number != expected_index:
        state.add(
            f"{where}.index",
            expected_index,
            number,
            "tool-call indexes are 0-based and contiguous in order of appearance",
        )
    call_id = fragment.get("id")
    if not isinstance(call_id, str) or not call_id:
        state.add(f"{where}.id", "a non-empty string", call_id, "the first fragment of a tool call has no id")
    elif call_id in choice.ids:
        state.add(
            f"{where}.id",
            "a unique id",
            call_id,
            f"id already used by the call at index {choice.ids[call_id]}",
        )
    else:
        choice.ids[call_id] = number
    if fragment.get("type") != "function":
        state.add(
            f"{where}.type",
            "function",
            fragment.get("type"),
            'the first fragment of a tool call lacks type: "function"',
        )
    if not isinstance(name, str) or not name:
        state.add(
            f"{where}.function.name",
            "a non-empty string",
            name,
            "the first fragment of a tool call has no function.name",
        )
    choice.calls[number] = _Call(call_id, where)


def _tool_arguments(state: _State) -> None:
    for number, choice in state.choices.items():
        for index, call in choice.calls.items():
            joined = "".join(call.pieces)
            parsed = reading.parse_json(joined)
            if not parsed.ok or not isinstance(parsed.value, dict):
                why = 'empty (a call without arguments is "{}")' if joined == "" else "not one JSON object"
                state.add(
                    f"choices[{number}].tool_calls[{index}].function.arguments",
                    "a JSON object as a string",
                    joined,
                    f"the joined arguments are {why}",
                )


def _identity(state: _State, created_judged: bool = False) -> None:
    """id, created, model and object are the same on every chunk (litellm#14962: a new id per chunk). `created`
    only where the rule asks (`created: constant`): a gateway that stamps each chunk with the second it converted
    it shows that only in a stream that crosses a second, so judged everywhere it would fail a fast rule by chance
    and pass it on the next run; the rule that asks paces its provider's stream over more than a second."""
    if not state.chunks:
        return
    _, first = state.chunks[0]
    for name in _IDENTITY:
        if name == "created" and not created_judged:
            continue
        reference = first.get(name, ABSENT) if name != "object" else "chat.completion.chunk"
        differing = [
            (i, c.get(name, ABSENT))
            for i, c in state.chunks
            if not json_equal(c.get(name, ABSENT), reference)
        ]
        if differing:
            i, value = differing[0]
            what = (
                "object is not chat.completion.chunk"
                if name == "object"
                else f"{name} changes between chunks"
            )
            state.add(
                f"stream[{i}].{name}",
                reference,
                value,
                f"{what} ({len(differing)} of {len(state.chunks)} chunks)",
            )


def _done(mode: str, view: reading.StreamView, state: _State) -> None:
    dones = [p.event.index for p in view.payloads if p.done]
    events = len(view.decoded.events)
    if mode == "forbidden":
        for index in dones:
            state.add(
                f"stream[{index}]",
                "no [DONE]",
                "[DONE]",
                "data: [DONE] is sent although this stream must not end with it",
            )
        return
    if not dones:
        if mode == "required":
            state.add(
                "stream",
                "data: [DONE] as the last event",
                _last_data(view),
                "the stream does not end with data: [DONE]",
            )
        return
    if len(dones) > 1:
        state.add(f"stream[{dones[1]}]", "one [DONE]", len(dones), "more than one data: [DONE]")
    if dones[0] != events - 1:
        state.add(
            f"stream[{dones[0] + 1}]", "nothing after [DONE]", _last_data(view), "events follow data: [DONE]"
        )
    late = [c for c in view.decoded.comments if c.before_event > dones[0]]
    if late:
        state.add(
            f"stream@{late[0].offset}",
            "nothing after [DONE]",
            f": {late[0].text}",
            "a comment line follows data: [DONE]",
        )


def _last_data(view: reading.StreamView) -> Any:
    return view.decoded.events[-1].data if view.decoded.events else None


def _ending(view: reading.StreamView, state: _State, error_expected: bool) -> None:
    if error_expected:
        payload_events = [p.event.index for p in view.payloads if not p.done]
        if not state.errors_at:
            state.add(
                "stream",
                'a final data: {"error": …} event',
                _last_data(view),
                "the stream does not end with an error event",
            )
        elif payload_events and payload_events[-1] != state.errors_at[-1]:
            state.add(
                f"stream[{state.errors_at[-1]}]",
                "the error event last (only [DONE] after it)",
                None,
                "events follow the error event",
            )
        return
    for index in state.errors_at:
        state.add(f"stream[{index}]", "no error event", None, "an unexpected error event in the stream")
    if not state.choices:
        state.add("stream", "chunks with choices", len(state.chunks), "the stream has no chunk with choices")
    for number, choice in state.choices.items():
        if choice.finish_at is None:
            state.add(
                f"choices[{number}].finish_reason",
                list(chat.FINISH_REASONS),
                None,
                "no chunk with a non-null finish_reason",
            )


def _usage(mode: str | None, exchange: Exchange, state: _State, error_expected: bool) -> None:
    because = "the rule requires one"
    if mode is None and error_expected:
        # A failed stream: whether a usage chunk may still come is each doc's own sentence (EZAT: "with no
        # usage chunk"; LYRouter: silent), so the rule says it with `usage_chunk`; unsaid, it is not judged.
        mode = "optional"
    if mode in (None, "auto"):
        mode = "required" if chat.requested_usage(exchange) else "forbidden"
        because = "stream_options.include_usage was set"
    if len(state.usage_at) > 1:
        state.add(
            f"stream[{state.usage_at[1]}]",
            "one usage chunk",
            len(state.usage_at),
            "more than one usage chunk",
        )
    if mode == "required" and not state.usage_at:
        state.add(
            "stream",
            'a {"choices": [], "usage": {…}} chunk',
            None,
            f"no usage chunk ({because})",
        )
    if mode == "forbidden" and state.usage_at:
        why = (
            "the stream failed"
            if error_expected
            else "stream_options.include_usage was not set"
            if because != "the rule requires one"
            else "the rule forbids one"
        )
        state.add(
            f"stream[{state.usage_at[0]}]", "no usage chunk", "usage chunk", f"a usage chunk although {why}"
        )
    if state.usage_at and state.finish_events and state.usage_at[0] < state.finish_events[-1]:
        state.add(
            f"stream[{state.usage_at[0]}]",
            "after the finish chunk",
            "before it",
            "the usage chunk comes before the finish chunk",
        )
