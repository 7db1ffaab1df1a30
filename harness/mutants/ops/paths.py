"""Paths into a JSON document (`choices.*.delta.tool_calls.*[id].function.arguments`) and the conditions an
edit or a mutant's `when` tests on one. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.errors import OpError

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
