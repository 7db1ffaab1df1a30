"""The mutation vocabulary: pure edits of JSON documents, SSE events and streams, statuses and headers.

Every function here takes its inputs and returns new values; nothing reads the network, the clock or
the environment. The proxy (`harness.mutants.proxy`) is the only caller that does I/O.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import OpError

# --- paths ---------------------------------------------------------------------------------------
#
# A path is dotted: `choices.*.delta.tool_calls.*[id].function.arguments`. A segment is a key, an
# integer index (negative counts from the end), `*` (every item or value), or `*[key]`, `*[!key]`,
# `*[key=value]` (every item that has / lacks the key, or whose key equals value). An empty path is
# the document itself.

_FILTER_RE = re.compile(r"^\*\[(!?)([A-Za-z0-9_]+)(?:=(.*))?\]$")


@dataclass(frozen=True)
class Segment:
    key: str | int | None  # None: a wildcard
    has: str | None = None
    lacks: str | None = None
    equals: tuple[str, str] | None = None


def parse_path(path: str) -> tuple[Segment, ...]:
    if path in ("", "$"):
        return ()
    segments = []
    for raw in path.split("."):
        if raw == "*":
            segments.append(Segment(None))
            continue
        m = _FILTER_RE.match(raw)
        if m:
            neg, key, value = m.groups()
            if value is not None:
                segments.append(Segment(None, equals=(key, value)))
            elif neg:
                segments.append(Segment(None, lacks=key))
            else:
                segments.append(Segment(None, has=key))
            continue
        if raw.startswith("*"):
            raise OpError(f"bad path segment {raw!r} in {path!r}")
        segments.append(Segment(int(raw) if re.fullmatch(r"-?\d+", raw) else raw))
    return tuple(segments)


def _children(node: Any, seg: Segment) -> Iterator[tuple[Any, str | int]]:
    """(container, key) pairs the segment selects in node (existing entries only)."""
    if seg.key is not None:
        if isinstance(node, dict) and isinstance(seg.key, str) and seg.key in node:
            yield node, seg.key
        elif isinstance(node, list) and isinstance(seg.key, int) and -len(node) <= seg.key < len(node):
            yield node, seg.key % len(node)
        return
    items: list[tuple[str | int, Any]]
    if isinstance(node, list):
        items = list(enumerate(node))
    elif isinstance(node, dict):
        items = list(node.items())
    else:
        return
    for key, value in items:
        if seg.has is not None and not (isinstance(value, dict) and seg.has in value):
            continue
        if seg.lacks is not None and not (isinstance(value, dict) and seg.lacks not in value):
            continue
        if seg.equals is not None:
            name, want = seg.equals
            if not (isinstance(value, dict) and str(value.get(name)) == want):
                continue
        yield node, key


def locate(doc: Any, path: Sequence[Segment]) -> list[tuple[Any, str | int]]:
    """Every (container, key) the path selects; the last segment must exist."""
    if not path:
        return []
    nodes = [doc]
    for seg in path[:-1]:
        nodes = [container[key] for node in nodes for container, key in _children(node, seg)]
    return [pair for node in nodes for pair in _children(node, path[-1])]


def parents(doc: Any, path: Sequence[Segment]) -> list[Any]:
    """The containers the path's last segment would live in (for set)."""
    nodes = [doc]
    for seg in path[:-1]:
        nodes = [container[key] for node in nodes for container, key in _children(node, seg)]
    return nodes


def get(doc: Any, path: str) -> list[Any]:
    """Values at a path (no match: [])."""
    segs = parse_path(path)
    if not segs:
        return [doc]
    return [c[k] for c, k in locate(doc, segs)]


# --- conditions ----------------------------------------------------------------------------------


def holds(doc: Any, cond: Mapping[str, Any]) -> bool:
    """`{path, equals | not_equals | exists | absent | one_of | matches}` against a document."""
    values = [v for v in get(doc, str(cond.get("path", ""))) if v is not None]
    if cond.get("absent"):
        return not values
    if cond.get("exists"):
        return bool(values)
    if "equals" in cond:
        return any(v == cond["equals"] for v in values)
    if "not_equals" in cond:
        return bool(values) and all(v != cond["not_equals"] for v in values)
    if "one_of" in cond:
        return any(v in cond["one_of"] for v in values)
    if "matches" in cond:
        return any(isinstance(v, str) and re.search(cond["matches"], v) for v in values)
    return bool(values)


# --- edits of one JSON document ---------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """What an edit may read besides the document: the client's request (upstream side), the status."""

    client: Any = None
    status: int | None = None
    index: int = 0  # the event's index in its stream (0 for a JSON body)


EditFn = Callable[[Any, Mapping[str, Any], Context], None]


def _set(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    segs = parse_path(edit["path"])
    value = ctx.status if edit.get("value_from") == "status" else edit.get("value")
    for parent in parents(doc, segs):
        key = segs[-1].key
        if isinstance(parent, dict) and isinstance(key, str):
            if edit.get("only_if_present") and key not in parent:
                continue
            if edit.get("only_if_absent") and parent.get(key) is not None:
                continue
            parent[key] = copy.deepcopy(value)
        elif isinstance(parent, list) and key is None:
            for i in range(len(parent)):
                parent[i] = copy.deepcopy(value)
        elif isinstance(parent, list) and isinstance(key, int) and -len(parent) <= key < len(parent):
            parent[key] = copy.deepcopy(value)


def _delete(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    pairs = locate(doc, parse_path(edit["path"]))
    if "if_value" in edit:
        pairs = [(c, k) for c, k in pairs if c[k] == edit["if_value"]]
    # Delete list items from the end so earlier indexes stay valid.
    for container, key in sorted(pairs, key=lambda p: p[1] if isinstance(p[1], int) else 0, reverse=True):
        del container[key]


def _rename(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Move a value to a sibling key (`to: name`), keeping its position irrelevant."""
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container, dict):
            container[edit["to"]] = container.pop(key)


def _map(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    table = {json.dumps(k): v for k, v in edit["values"]}
    for container, key in locate(doc, parse_path(edit["path"])):
        found = json.dumps(container[key])
        if found in table:
            container[key] = copy.deepcopy(table[found])


def _add(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Add an integer (or, with `path_of`, another value of the same document) to integers."""
    for container, key in locate(doc, parse_path(edit["path"])):
        value = container[key]
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        delta = int(edit.get("value", 0))
        for other in edit.get("minus", ()):
            delta -= sum(v for v in get(doc, other) if isinstance(v, int) and not isinstance(v, bool))
        delta += int(edit.get("per_event", 0)) * ctx.index
        container[key] = value + delta


def _sub(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container[key], str):
            container[key] = re.sub(edit["pattern"], edit["repl"], container[key], count=1)


def _stringify(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    for container, key in locate(doc, parse_path(edit["path"])):
        container[key] = json.dumps(container[key])


def _objectify(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """A JSON string becomes the value it encodes (tool arguments as an object)."""
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container[key], str):
            try:
                container[key] = json.loads(container[key])
            except ValueError:
                continue


def _duplicate_item(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Append a copy of a list item (a second choice), with its `index` advanced when it has one."""
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container, list) and isinstance(key, int):
            item = copy.deepcopy(container[key])
            if isinstance(item, dict) and isinstance(item.get("index"), int):
                item["index"] = len(container)
            container.append(item)


def _reverse(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """A list in reverse order; an object with its keys in reverse order (the same content)."""
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container[key], list):
            container[key] = list(reversed(container[key]))
        elif isinstance(container[key], dict):
            container[key] = dict(reversed(list(container[key].items())))


def _copy_from_client(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Upstream side: forward a client field unchanged (`from` in the client's request → `path` here)."""
    if not isinstance(doc, dict) or not isinstance(ctx.client, dict):
        return
    found = [v for v in get(ctx.client, edit["from"]) if v is not None]
    if not found:
        return
    segs = parse_path(edit["path"])
    for parent in parents(doc, segs):
        key = segs[-1].key
        if not isinstance(parent, dict) or not isinstance(key, str):
            continue
        if edit.get("only_if_present") and key not in parent:
            continue
        if edit.get("only_if_absent") and key in parent:
            continue
        parent[key] = copy.deepcopy(found[0])


def _client_texts(client: Any, role: str) -> list[str]:
    texts = []
    for message in (client or {}).get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return [t for t in texts if t]


def _remove_client_texts(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Upstream side: cut the text of the client's messages of one role out of a string or text blocks."""
    texts = _client_texts(ctx.client, edit["role"])
    for container, key in locate(doc, parse_path(edit["path"])):
        value = container[key]
        if isinstance(value, str):
            for text in texts:
                value = value.replace(text, "")
            container[key] = value.strip()
        elif isinstance(value, list):
            kept = []
            for block in value:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    text = block["text"]
                    for t in texts:
                        text = text.replace(t, "")
                    if not text.strip() and block["text"].strip():
                        continue
                    block = {**block, "text": text.strip()}
                kept.append(block)
            container[key] = kept


def _move_cache_control(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Move every `cache_control` under `path` onto the last block of the `to` item (strings become blocks)."""
    moved = None
    for container, key in locate(doc, parse_path(edit["path"])):
        item = container[key]
        for block in (
            item.get("content", [])
            if isinstance(item, dict) and isinstance(item.get("content"), list)
            else []
        ):
            if isinstance(block, dict) and "cache_control" in block:
                moved = block.pop("cache_control")
    if moved is None:
        return
    for container, key in locate(doc, parse_path(edit["to"])):
        item = container[key]
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("content"), str):
            item["content"] = [{"type": "text", "text": item["content"]}]
        if isinstance(item.get("content"), list) and item["content"]:
            item["content"][-1]["cache_control"] = moved
        return


def _join_text_parts(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """A content array becomes one string, its text parts joined by `sep` (default a newline): only when every
    part is text, or, with `drop_other_parts`, whatever else it held (an adapter that flattens content)."""
    sep = str(edit.get("sep", "\n"))
    for container, key in locate(doc, parse_path(edit["path"])):
        parts = container[key]
        if not isinstance(parts, list) or not parts:
            continue
        texts = [p["text"] for p in parts if isinstance(p, dict) and p.get("type") == "text" and "text" in p]
        if len(texts) == len(parts) or (edit.get("drop_other_parts") and texts):
            container[key] = sep.join(str(t) for t in texts)


def _wrap_string(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """A string content becomes one text part (an adapter that always sends parts)."""
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container[key], str):
            container[key] = [{"type": "text", "text": container[key]}]


EDIT_OPS: dict[str, EditFn] = {
    "set": _set,
    "delete": _delete,
    "rename": _rename,
    "map": _map,
    "add": _add,
    "sub": _sub,
    "stringify": _stringify,
    "objectify": _objectify,
    "reverse": _reverse,
    "duplicate_item": _duplicate_item,
    "copy_from_client": _copy_from_client,
    "remove_client_texts": _remove_client_texts,
    "move_cache_control": _move_cache_control,
    "join_text_parts": _join_text_parts,
    "wrap_string": _wrap_string,
}
_EDIT_REQUIRED = {
    "rename": ("to",),
    "map": ("values",),
    "sub": ("pattern", "repl"),
    "copy_from_client": ("from",),
    "remove_client_texts": ("role",),
    "move_cache_control": ("to",),
}


def check_edit(edit: Mapping[str, Any]) -> None:
    """Raise OpError when an edit is not in the vocabulary (catalog loading)."""
    op = edit.get("op")
    if op not in EDIT_OPS:
        raise OpError(f"unknown edit op {op!r} (known: {', '.join(sorted(EDIT_OPS))})")
    if "path" not in edit:
        raise OpError(f"edit {op} needs a path")
    parse_path(str(edit["path"]))
    for key in _EDIT_REQUIRED.get(str(op), ()):
        if key not in edit:
            raise OpError(f"edit {op} needs {key!r}")


def apply_edits(doc: Any, edits: Sequence[Mapping[str, Any]], ctx: Context = Context()) -> Any:
    """A copy of doc with the edits applied in order (an edit whose `if` does not hold is skipped)."""
    out = copy.deepcopy(doc)
    for edit in edits:
        cond = edit.get("if")
        if cond is not None and not holds(out, cond):
            continue
        if_client = edit.get("if_client")
        if if_client is not None and not holds(ctx.client, if_client):
            continue
        EDIT_OPS[edit["op"]](out, edit, ctx)
    return out


# --- SSE events --------------------------------------------------------------------------------------


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


# --- stream operations: (state, event) → events -----------------------------------------------------------
#
# A stream op sees one event at a time and returns the events to send instead (none, the same, more).
# Its memory is the `state` dict the rewriter owns for it; `end` flushes what an op held back. No op
# waits for the whole stream: at most one event is held.


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


def _usage_after_error(st: OpState, ev: SseEvent | None) -> list[SseEvent]:
    """A usage chunk beside a mid-stream error event: after it, or (`before: true`) just before it."""
    if ev is None:
        return []
    doc = ev.json()
    if isinstance(doc, dict) and doc.get("choices"):
        st.memo["head"] = {k: doc[k] for k in ("id", "object", "created", "model") if k in doc}
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
    doc = ev.json()
    if isinstance(doc, dict) and doc.get("choices"):
        st.memo["head"] = {k: doc[k] for k in ("id", "object", "created", "model") if k in doc}
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


STREAM_OPS: dict[str, StreamFn] = {
    "drop_done": _drop_done,
    "done_without_prefix": _done_without_prefix,
    "drop_done_after_error": _drop_done_after_error,
    "add_done_after_error": _add_done_after_error,
    "event_lines": _event_lines,
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
    ctx: Context = Context(),
) -> list[SseEvent]:
    """The whole-stream form of `StreamRewriter` (tests, and reasoning about an op)."""
    rewriter = StreamRewriter(edits, ops, ctx)
    out = [o for ev in events for o in rewriter.feed(ev)]
    return out + rewriter.end()


def check_stream_op(op: Mapping[str, Any]) -> None:
    if op.get("op") not in STREAM_OPS:
        raise OpError(f"unknown stream op {op.get('op')!r} (known: {', '.join(sorted(STREAM_OPS))})")


# --- status and headers --------------------------------------------------------------------------------


def map_status(status: int, table: Mapping[Any, Any]) -> int:
    return int(table.get(status, table.get(str(status), status)))


def edit_headers(headers: Sequence[tuple[str, str]], spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`{drop: [names], set: {name: value}, rename: {old: new}}` on lower-cased header pairs."""
    drop = {h.lower() for h in spec.get("drop", ())}
    rename = {k.lower(): v.lower() for k, v in (spec.get("rename") or {}).items()}
    out = [(rename.get(k.lower(), k.lower()), v) for k, v in headers if k.lower() not in drop]
    for name, value in (spec.get("set") or {}).items():
        out = [(k, v) for k, v in out if k != name.lower()] + [(name.lower(), str(value))]
    return out
