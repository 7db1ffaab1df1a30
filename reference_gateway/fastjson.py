"""JSON for the per-request and per-event hot path: orjson where its bytes are the standard library's, the
standard library where they might not be (pure functions; no I/O).

orjson writes the same compact UTF-8 text as `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`
for strings, integers up to 64 bits, booleans, null, lists and dicts with string keys — everything the
gateway's own answers (completions, chunks, error envelopes) are made of: they carry no floats, whose
exponent orjson spells differently (1e-05 → 0.00001). Anything orjson refuses (a bigger integer, a lone
surrogate, a non-string key) falls back to the standard library, error included. `loads` returns what
`json.loads` returns for every document orjson accepts, except that orjson reads an integer of 20 or more
digits as a float: a document with such a digit run, and anything orjson refuses, is parsed by
`json.loads`, so that values, what is accepted and what an error says stay exactly as before.
"""

from __future__ import annotations

import json
import re
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; this keeps a bare install working
    orjson = None  # type: ignore[assignment]


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (for the gateway's own answers: no floats, see the module doc)."""
    if orjson is not None:
        try:
            return orjson.dumps(value)
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# JSON's digits are ASCII. A run of 20 covers two neighbours among every 10th character (`data[::10]`): that
# cheap test (a tenth of the text) comes first, the full search only when it passes (once per stream event).
_PAIR = re.compile(r"[0-9]{2}")
_LONG_DIGITS = re.compile(r"[0-9]{20}")


def _long_digit_run(data: str) -> bool:
    return _PAIR.search(data[::10]) is not None and _LONG_DIGITS.search(data) is not None


def loads(data: str) -> Any:
    """`json.loads(data)`, faster for the documents orjson reads the same."""
    if orjson is not None and not _long_digit_run(data):
        try:
            return orjson.loads(data)
        except (orjson.JSONDecodeError, TypeError):
            pass
    return json.loads(data)
