"""JSON values as checks and surfaces compare and show them: deep JSON equality (1 == 1.0, true != 1), the
JSON type name of a value, and a value shortened for a violation's `expected`/`actual`. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_LIMIT = 200


def short(value: Any, limit: int = _LIMIT) -> Any:
    """`value` itself when small; a truncated JSON text of it when large (violations stay readable)."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
        return text if len(text) <= limit else text[:limit] + f"… ({len(value)} bytes)"
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= limit:
        return value
    return text[:limit] + f"… ({len(text)} chars)"


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: 1 == 1.0, but true != 1 and "1" != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)):
        return False
    return bool(a == b)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()  # a key that is not there (distinct from a null value)
