"""Edits of one JSON document: set, delete, rename, map, add, stringify, move `cache_control`, copy from the
client's request, ... each an `EditFn` in EDIT_OPS, checked before any is applied. Pure: a new document out."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.errors import OpError
from harness.mutants.ops.paths import get, holds, locate, parents, parse_path


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


def _enclose(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """The value becomes an object holding it under `key` (a custom tool's text as a function's `{"input": …}`)."""
    for container, key in locate(doc, parse_path(edit["path"])):
        container[key] = {str(edit["key"]): container[key]}


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


def _insert(doc: Any, edit: Mapping[str, Any], ctx: Context) -> None:
    """Insert a copy of `value` at `index` (default 0) of each list the path names: a block the provider never sent."""
    for container, key in locate(doc, parse_path(edit["path"])):
        if isinstance(container[key], list):
            container[key].insert(int(edit.get("index", 0)), copy.deepcopy(edit["value"]))


EDIT_OPS: dict[str, EditFn] = {
    "set": _set,
    "delete": _delete,
    "rename": _rename,
    "map": _map,
    "add": _add,
    "sub": _sub,
    "stringify": _stringify,
    "objectify": _objectify,
    "enclose": _enclose,
    "reverse": _reverse,
    "duplicate_item": _duplicate_item,
    "copy_from_client": _copy_from_client,
    "remove_client_texts": _remove_client_texts,
    "move_cache_control": _move_cache_control,
    "join_text_parts": _join_text_parts,
    "wrap_string": _wrap_string,
    "insert": _insert,
}
_EDIT_REQUIRED = {
    "insert": ("value",),
    "rename": ("to",),
    "enclose": ("key",),
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
