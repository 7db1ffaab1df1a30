"""Stream operations: (state, event) → the events to send instead, one event at a time (drop `[DONE]`, merge
the role chunk, cut after N events, turn an error into a stop, ...), and the rewriter that runs them. Pure but
for the one op that reads the clock (TIMED_STREAM_OPS)."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import OpError
from harness.mutants.ops.edits import Context
from harness.mutants.ops.events import SseEvent, edit_event, kind_of, selected
from harness.mutants.ops.paths import holds

#
# A stream op sees one event at a time and returns the events to send instead (none, the same, more).
# Its memory is the `state` dict the rewriter owns for it; `end` flushes what an op held back. No op
# waits for the whole stream but `hold_all`, whose bug that is: the others hold at most one event.


@dataclass
class OpState:
    params: Mapping[str, Any]
    ctx: Context
    memo: dict[str, Any] = field(default_factory=dict)


StreamFn = Callable[[OpState, SseEvent | None], list[SseEvent]]  # None: the stream ended


def _drop_done(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    return [] if ev is None or kind_of(ev) == "done" else [ev]


def _done_without_prefix(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None:
        return []
    return [SseEvent(("[DONE]",))] if kind_of(ev) == "done" else [ev]


def _drop_done_after_error(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None:
        return []
    if kind_of(ev) == "error":
        st.memo["error"] = True
    return [] if st.memo.get("error") and kind_of(ev) == "done" else [ev]


def _add_done_after_error(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None:
        return [SseEvent.of_data("[DONE]")] if st.memo.get("error") and not st.memo.get("done") else []
    kind = kind_of(ev)
    st.memo["error"] = st.memo.get("error") or kind == "error"
    st.memo["done"] = st.memo.get("done") or kind == "done"
    return [ev]


def _event_lines(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None or ev.is_comment or ev.data is None:
        return [] if ev is None else [ev]
    return [SseEvent((f"event: {st.params.get('name', 'message')}", *ev.lines))]


def _sse_ids_and_pings(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """An `id: N` field on every data event and a `: ping` comment block after the first (a gateway that
    numbers its events for resumption and keeps the connection alive)."""
    if ev is None or ev.is_comment or ev.data is None:
        return [] if ev is None else [ev]
    n = st.memo.get("n", 0)
    st.memo["n"] = n + 1
    out = [SseEvent((f"id: {n}", *ev.lines))]
    if n == 0:
        out.append(SseEvent((": ping",)))
    return out


def _append_done(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """A Chat Completions `data: [DONE]` after the stream's last event (one API's framing on the other's)."""
    return [SseEvent.of_data("[DONE]")] if ev is None else [ev]


def _drop_event_names(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """Every `event:` line removed: a Messages stream sent as bare `data:` lines (anthropic-python yields nothing)."""
    if ev is None:
        return []
    return [SseEvent(tuple(ln for ln in ev.lines if not ln.startswith("event:")))]


def _drop_where(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """Events whose data meets `where` ({path, equals | …}, harness/mutants/ops/paths.py) are dropped."""
    if ev is None:
        return []
    doc = ev.json()
    return [] if doc is not None and holds(doc, st.params.get("where") or {}) else [ev]


def _ping_to_event(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is not None and ev.is_comment:
        return [SseEvent.of_data({"type": "ping"}, event="ping")]
    return [] if ev is None else [ev]


def _comment_to_data(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is not None and ev.is_comment:
        return [SseEvent(tuple("data: " + ln for ln in ev.lines))]
    return [] if ev is None else [ev]


def _merge_role(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """The role-only opening chunk is held and merged into the next chunk's delta."""
    if ev is None:
        rest = st.memo.pop("held", None)
        return [rest] if rest else []
    if st.memo.get("done_merging"):
        return [ev]
    if "held" not in st.memo:
        if kind_of(ev) == "role":
            st.memo["held"] = ev
            return []
        st.memo["done_merging"] = True
        return [ev]
    held: SseEvent = st.memo.pop("held")
    st.memo["done_merging"] = True
    doc, first = ev.json(), held.json()
    if not (isinstance(doc, dict) and doc.get("choices") and isinstance(first, dict)):
        return [held, ev]
    role = first["choices"][0].get("delta", {}).get("role")
    delta = {"role": role, **(doc["choices"][0].get("delta") or {})}
    new = copy.deepcopy(doc)
    new["choices"][0]["delta"] = delta
    return [ev.with_json(new)]


def _drop_kind(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None:
        return []
    if selected(ev, st.params.get("select"), st.memo.setdefault("n", 0)):
        limit = st.params.get("count")
        st.memo["dropped"] = st.memo.get("dropped", 0) + 1
        if limit is None or st.memo["dropped"] <= int(limit):
            st.memo["n"] += 1
            return []
    st.memo["n"] += 1
    return [ev]


def _duplicate(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None:
        return []
    return [ev, ev] if selected(ev, st.params.get("select"), -1) else [ev]


def _finish_with_content(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """The last content delta travels in the finish chunk (vllm#35705): hold content, merge on finish."""
    if ev is None:
        held = st.memo.pop("held", None)
        return [held] if held else []
    kind = kind_of(ev)
    out: list[SseEvent] = []
    held = st.memo.pop("held", None)
    if kind == "content":
        if held:
            out.append(held)
        st.memo["held"] = ev
        return out
    if kind == "finish" and held is not None:
        doc, text = ev.json(), held.json()
        new = copy.deepcopy(doc)
        new["choices"][0]["delta"] = text["choices"][0]["delta"]
        return [ev.with_json(new)]
    return ([held] if held else []) + [ev]


def _usage_in_finish(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """Usage rides on the finish chunk instead of its own `choices: []` chunk."""
    if ev is None:
        held = st.memo.pop("held", None)
        return [held] if held else []
    kind = kind_of(ev)
    if kind == "finish":
        st.memo["held"] = ev
        return []
    held = st.memo.pop("held", None)
    if held is None:
        return [ev]
    if kind == "usage":
        new = {**held.json(), "usage": ev.json()["usage"]}
        return [held.with_json(new)]
    return [held, ev]


def _running_usage(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """Every content chunk carries a running usage count (vllm#7262)."""
    if ev is None or kind_of(ev) not in ("content", "role", "tool"):
        return [] if ev is None else [ev]
    st.memo["n"] = st.memo.get("n", 0) + 1
    n = st.memo["n"]
    return [
        ev.with_json({**ev.json(), "usage": {"prompt_tokens": 0, "completion_tokens": n, "total_tokens": n}})
    ]


def _usage_without_include(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """A usage chunk after the finish chunk although the client did not ask for one."""
    client = st.ctx.client if isinstance(st.ctx.client, dict) else {}
    asked = (client.get("stream_options") or {}).get("include_usage") is True
    if ev is None or asked:
        return [] if ev is None else [ev]
    if kind_of(ev) == "finish":
        doc = ev.json()
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        extra = {k: doc[k] for k in ("id", "object", "created", "model") if k in doc}
        return [ev, SseEvent.of_data({**extra, "choices": [], "usage": usage})]
    return [ev]


def _remember_head(st: OpState, ev: SseEvent) -> None:
    """Keep a content chunk's id, object, created and model: the chunk an op writes later carries them."""
    doc = ev.json()
    if isinstance(doc, dict) and doc.get("choices"):
        st.memo["head"] = {k: doc[k] for k in ("id", "object", "created", "model") if k in doc}


def _usage_after_error(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """A usage chunk beside a mid-stream error event: after it, or (`before: true`) just before it."""
    if ev is None:
        return []
    _remember_head(st, ev)
    if kind_of(ev) == "error":
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        chunk = SseEvent.of_data({**st.memo.get("head", {}), "choices": [], "usage": usage})
        return [chunk, ev] if st.params.get("before") else [ev, chunk]
    return [ev]


def _arguments_only(ev: SseEvent) -> tuple[Any, str] | None:
    """(index, arguments) of a chunk that is one tool call's arguments fragment and nothing else."""
    doc = ev.json()
    if kind_of(ev) != "tool" or not isinstance(doc, dict):
        return None
    calls = doc["choices"][0]["delta"]["tool_calls"]
    if len(calls) != 1 or not isinstance(calls[0], dict) or set(calls[0]) - {"index", "function"}:
        return None
    function = calls[0].get("function")
    if not isinstance(function, dict) or set(function) != {"arguments"}:
        return None
    return calls[0].get("index"), str(function["arguments"])


def _merge_tool_arguments(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """Consecutive argument fragments of one tool call are sent as one (a gateway that buffers them)."""
    held: SseEvent | None = st.memo.get("held")
    if ev is None:
        st.memo.pop("held", None)
        return [held] if held else []
    fragment = _arguments_only(ev)
    if fragment is None:
        st.memo.pop("held", None)
        return ([held] if held else []) + [ev]
    if held is None:
        st.memo["held"] = ev
        return []
    before = _arguments_only(held)
    if before is None or before[0] != fragment[0]:
        st.memo["held"] = ev
        return [held]
    doc = copy.deepcopy(held.json())
    doc["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = before[1] + fragment[1]
    st.memo["held"] = held.with_json(doc)
    return []


def _id_per_chunk(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    if ev is None:
        return []
    doc = ev.json()
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
        return [ev]
    st.memo["n"] = st.memo.get("n", 0) + 1
    return [ev.with_json({**doc, "id": f"{doc['id']}{st.memo['n']}"})]


def _repeat_tool_ids(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """id, type and name on every argument fragment (litellm#20480)."""
    if ev is None or kind_of(ev) != "tool":
        return [] if ev is None else [ev]
    doc = copy.deepcopy(ev.json())
    seen = st.memo.setdefault("calls", {})
    for call in doc["choices"][0]["delta"]["tool_calls"]:
        index = call.get("index")
        if call.get("id"):
            seen[index] = {
                "id": call["id"],
                "type": call.get("type", "function"),
                "name": (call.get("function") or {}).get("name"),
            }
        elif index in seen:
            call["id"], call["type"] = seen[index]["id"], seen[index]["type"]
            call.setdefault("function", {})["name"] = seen[index]["name"]
    return [ev.with_json(doc)]


def _cut_after(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """The stream ends (cleanly closed) after N data events: no finish chunk, no [DONE]."""
    if ev is None:
        return []
    if ev.data is not None:
        st.memo["n"] = st.memo.get("n", 0) + 1
    return [ev] if st.memo.get("n", 0) <= int(st.params.get("events", 2)) else []


def _cut_after_seconds(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """The first event that arrives more than `seconds` after the stream's first is replaced by a timeout error
    and `[DONE]`, and nothing follows: a non-streaming time limit applied to streams too (the clock is the
    proxy's, as the events pass through it)."""
    if ev is None or st.memo.get("cut"):
        return []
    now = time.monotonic()
    started = st.memo.setdefault("started", now)
    limit = float(st.params.get("seconds", 3))
    if now - started <= limit:
        return [ev]
    st.memo["cut"] = True
    error = {
        "error": {
            "message": f"The request took longer than {limit:g} seconds; stream it instead.",
            "type": "server_error",
            "param": None,
            "code": "timeout",
        }
    }
    return [SseEvent.of_data(error), SseEvent.of_data("[DONE]")]


def _error_to_stop(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """A mid-stream error is swallowed and replaced by a synthetic `stop` (litellm#40578)."""
    if ev is None:
        return []
    _remember_head(st, ev)
    if kind_of(ev) == "error":
        chunk = {
            **st.memo.get("head", {}),
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
        }
        return [SseEvent.of_data(chunk)]
    return [ev]


def _error_as_field(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """The error is written as an SSE `error:` field, which SSE clients ignore (llama.cpp#16104)."""
    if ev is not None and kind_of(ev) == "error":
        return [SseEvent(tuple("error:" + ln[5:] if ln.startswith("data:") else ln for ln in ev.lines))]
    return [] if ev is None else [ev]


def _tool_input_lost_after_text(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """A Messages stream whose tool_use block follows a text block loses that call's `input_json_delta` events, so
    the call arrives as `input: {}` (BerriAI/litellm#25321: the text-to-tool transition drops the queued chunk)."""
    if ev is None:
        return []
    doc = ev.json()
    if not isinstance(doc, dict):
        return [ev]
    given = doc.get("content_block")
    block: dict[str, Any] = given if isinstance(given, dict) else {}
    if doc.get("type") == "content_block_start":
        if block.get("type") == "text":
            st.memo["text_seen"] = True
        elif block.get("type") == "tool_use" and st.memo.get("text_seen"):
            st.memo.setdefault("after_text", set()).add(doc.get("index"))
    moved = doc.get("delta")
    delta: dict[str, Any] = moved if isinstance(moved, dict) else {}
    if delta.get("type") == "input_json_delta" and doc.get("index") in st.memo.get("after_text", ()):
        return []
    return [ev]


def _hold_all(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """Every event held back and the whole answer sent at once when the provider's stream ends: a gateway that
    buffers a stream (databricks/unity-gateway#361, router-for-me/CLIProxyAPI#498). The one op that holds more
    than one event: holding them all is the bug."""
    held: list[SseEvent] = st.memo.setdefault("held", [])
    if ev is None:
        st.memo["held"] = []
        return held
    held.append(ev)
    return []


def _after_next(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """The first event whose data meets `where` is held back and sent after the event that follows it: two events
    out of order, as a relay that writes from two queued producers sends them (each event unchanged)."""
    held: SseEvent | None = st.memo.get("held")
    if ev is None:
        st.memo["held"] = None
        return [held] if held is not None else []
    if held is not None:
        st.memo["held"] = None
        return [ev, held]
    doc = ev.json()
    if not st.memo.get("done") and doc is not None and holds(doc, st.params.get("where") or {}):
        st.memo["held"], st.memo["done"] = ev, True
        return []
    return [ev]


STREAM_OPS: dict[str, StreamFn] = {
    "drop_done": _drop_done,
    "done_without_prefix": _done_without_prefix,
    "drop_done_after_error": _drop_done_after_error,
    "add_done_after_error": _add_done_after_error,
    "event_lines": _event_lines,
    "sse_ids_and_pings": _sse_ids_and_pings,
    "append_done": _append_done,
    "drop_event_names": _drop_event_names,
    "drop_where": _drop_where,
    "ping_to_event": _ping_to_event,
    "comment_to_data": _comment_to_data,
    "merge_role": _merge_role,
    "drop": _drop_kind,
    "duplicate": _duplicate,
    "finish_with_content": _finish_with_content,
    "usage_in_finish": _usage_in_finish,
    "running_usage": _running_usage,
    "usage_without_include": _usage_without_include,
    "usage_after_error": _usage_after_error,
    "id_per_chunk": _id_per_chunk,
    "repeat_tool_ids": _repeat_tool_ids,
    "merge_tool_arguments": _merge_tool_arguments,
    "cut_after": _cut_after,
    "cut_after_seconds": _cut_after_seconds,
    "error_to_stop": _error_to_stop,
    "error_as_field": _error_as_field,
    "hold_all": _hold_all,
    "tool_input_lost_after_text": _tool_input_lost_after_text,
    "after_next": _after_next,
}
# Stream ops that read the clock: what they do depends on when events pass, not only on their bytes.
TIMED_STREAM_OPS = frozenset({"cut_after_seconds"})


class StreamRewriter:
    """Feeds events through the chunk edits, then through each stream op in order."""

    def __init__(
        self, edits: Sequence[Mapping[str, Any]], ops: Sequence[Mapping[str, Any]], ctx: Context
    ) -> None:
        self.edits = edits
        self.ctx = ctx
        self.ops = [(STREAM_OPS[o["op"]], OpState(o, ctx)) for o in ops]
        self.index = 0

    def feed(self, event: SseEvent) -> list[SseEvent]:
        if self.edits and event.data is not None:
            event = edit_event(event, self.edits, self.index, self.ctx)
        self.index += 1
        return self._through([event], 0)

    def end(self) -> list[SseEvent]:
        # Each op flushes what it held; that passes through the ops after it before they flush in turn.
        out: list[SseEvent] = []
        for i, (fn, state) in enumerate(self.ops):
            out += self._through(fn(state, None), i + 1)
        return out

    def _through(self, events: list[SseEvent], start: int) -> list[SseEvent]:
        for fn, state in self.ops[start:]:
            events = [out for ev in events for out in fn(state, ev)]
        return events


def rewrite_stream(
    events: Sequence[SseEvent],
    edits: Sequence[Mapping[str, Any]],
    ops: Sequence[Mapping[str, Any]],
    ctx: Context | None = None,
) -> list[SseEvent]:
    """The whole-stream form of `StreamRewriter` (tests, and reasoning about an op)."""
    rewriter = StreamRewriter(edits, ops, ctx or Context())
    out = [o for ev in events for o in rewriter.feed(ev)]
    return out + rewriter.end()


def check_stream_op(op: Mapping[str, Any]) -> None:
    if op.get("op") not in STREAM_OPS:
        raise OpError(f"unknown stream op {op.get('op')!r} (known: {', '.join(sorted(STREAM_OPS))})")
