"""Canonical JSON for upstream bodies (pure): keys sorted by code point at every level, numbers with at most
14 significant digits (LYRouter "Fixed JSON key order" and "Number precision"), no insignificant whitespace.
"""

from __future__ import annotations

import json
import math
from typing import Any

# LYRouter: "numbers keep at most 14 significant digits. Longer integers (such as 19-digit IDs) become
# scientific notation" — C's %.14g, as a JSON encoder built on doubles prints them.
_SIGNIFICANT = 14


def number(value: int | float) -> str:
    """`value` with at most 14 significant digits: 42 → `42`, 0.1 + 0.2 → `0.3`, 1234567890123456789 →
    `1.2345678901235e+18`. Integers that fit in 14 digits stay integers."""
    if isinstance(value, int) and abs(value) < 10**_SIGNIFICANT:
        return str(value)
    as_float = float(value)
    if math.isnan(as_float) or math.isinf(as_float):
        raise ValueError("NaN and infinity are not JSON")
    return f"{as_float:.{_SIGNIFICANT}g}"


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int | float):
        out.append(number(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value)):
            if i:
                out.append(",")
            out.append(json.dumps(str(key), ensure_ascii=False))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"not JSON: {type(value).__name__}")


def canonical_dumps(value: Any) -> str:
    """The canonical text of a JSON value (sorted keys, 14 significant digits, compact separators)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)


def compact_dumps(value: Any) -> str:
    """The plain compact text, keys in the order they were built."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def canonical_json_text(text: str) -> str:
    """A JSON document inside a string (a tool call's `arguments`) in canonical form; text that is not JSON is
    returned unchanged (LYRouter reorders "JSON inside tool call argument strings")."""
    try:
        return canonical_dumps(json.loads(text))
    except ValueError:
        return text
