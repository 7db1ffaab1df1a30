"""The request body parsed once, with limits (pure): JSON text → a value with finite numbers, Unicode strings
and bounded nesting, or a `BodyError` that says what was wrong without quoting the body.

RFC 8259 section 9 lets a parser limit nesting depth and the range of numbers; lone surrogate escapes are
grammatical JSON but no Unicode text, and cannot be sent upstream as UTF-8.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

# A reading (the docs are silent): serde_json's default recursion limit. Real tool schemas nest a few levels.
MAX_DEPTH = 128

_SURROGATE = re.compile("[\ud800-\udfff]")


class BodyError(ValueError):
    """`syntax`: the bytes are not JSON at all; `limit`: JSON beyond what the gateway accepts (`problem`
    names which limit, for a message)."""

    def __init__(self, kind: Literal["syntax", "limit"], problem: str) -> None:
        super().__init__(problem)
        self.kind = kind
        self.problem = problem


def _constant(name: str) -> Any:
    raise BodyError("limit", f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise BodyError("limit", "a number is out of range (beyond a 64-bit float)")
    return value


def _int(text: str) -> int:
    value = int(text)
    if len(text) > 309 and math.isinf(float(text)):
        raise BodyError("limit", "a number is out of range (beyond a 64-bit float)")
    return value


def parse_json(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `raw`. Raises `BodyError`: `syntax` with the parser's message (where it stopped,
    never the text), or `limit` for nesting deeper than `max_depth`, a number a 64-bit float cannot hold, NaN
    or Infinity, or a lone surrogate in a string or a key."""
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except BodyError:
        raise
    except RecursionError as exc:
        raise BodyError("limit", f"it is nested more than {max_depth} levels deep") from exc
    except json.JSONDecodeError as exc:
        raise BodyError("syntax", f"{exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except UnicodeDecodeError as exc:
        raise BodyError("syntax", "the body is not UTF-8") from exc
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit limit
        raise BodyError("syntax", str(exc).split(";")[0]) from exc
    _check(value, max_depth)
    return value


def _check(value: Any, max_depth: int) -> None:
    """Depth and lone surrogates, iteratively (a recursive walk would hit the same recursion limit)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                raise BodyError("limit", _LONE_SURROGATE)
        elif isinstance(item, dict | list):
            if depth > max_depth:
                raise BodyError("limit", f"it is nested more than {max_depth} levels deep")
            if isinstance(item, dict):
                for key, child in item.items():
                    if not key.isascii() and _SURROGATE.search(key):
                        raise BodyError("limit", _LONE_SURROGATE)
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)


_LONE_SURROGATE = "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not Unicode text"
