"""fastjson: the standard library's bytes and values, from orjson where they are the same."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reference_gateway.fastjson import dumps, loads

ANSWERS: list[Any] = [
    {"id": "chatcmpl-1", "choices": [{"delta": {"content": 'é ü 漢字 \u2028 \x1f "q" \\'}, "index": 0}]},
    {"usage": {"prompt_tokens": 12, "completion_tokens": 0}, "logprobs": None, "ok": True, "no": False},
    {"big": 2**70, "neg": -(2**63)},  # beyond 64 bits: the standard library's digits
    [],
    {},
    "plain",
]


@pytest.mark.parametrize("value", ANSWERS)
def test_dumps_is_the_standard_librarys_compact_utf8(value: Any) -> None:
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def test_dumps_fails_where_the_standard_library_fails() -> None:
    with pytest.raises(UnicodeEncodeError):
        dumps({"text": "\ud800"})  # a lone surrogate cannot be UTF-8


DOCUMENTS = [
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}',
    '{"a":1,"a":2}',
    '{"id":123456789012345678901234567890}',  # 20+ digits: orjson would read a float
    '{"x":18446744073709551615,"y":-9223372036854775808}',
    "NaN",
    "[1e400]",
    '"\\ud800"',
    '{"f":0.1,"g":1e-07}',
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_loads_returns_what_the_standard_library_returns(text: str) -> None:
    assert repr(loads(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["{", "", "[1,]", "{'a': 1}"])
def test_loads_refuses_with_the_standard_librarys_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("pad", range(10))
def test_a_20_digit_integer_at_any_offset_is_the_standard_librarys(pad: int) -> None:
    # The digit-run filter looks at every 10th character first: the run is found wherever it starts.
    text = '{"' + "k" * pad + '":12345678901234567890}'
    assert repr(loads(text)) == repr(json.loads(text))
    assert isinstance(loads(text)["k" * pad], int)
