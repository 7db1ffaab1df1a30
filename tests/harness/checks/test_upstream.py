"""Upstream-side checks: call count, forwarded body, headers and Anthropic request schema."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checks import check_for
from harness.exchange import Exchange
from harness.surfaces.chat_completions import SURFACE as CHAT
from tests.harness.checks.exchanges import call, exchange, messages

GOOD_BODY = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 1024,
    "system": "Be brief.",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "[gc:test] hi"}]}],
    "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "stream": False,
}
LEAKY_BODY = dict(GOOD_BODY, n=1, stream_options={"include_usage": True}, temperature=1.5, tool_choice="auto")

ONE = exchange("json/completion_text.json", upstream=(call(GOOD_BODY),))
TWO = exchange("json/completion_text.json", upstream=(call(LEAKY_BODY), call(GOOD_BODY)))
NONE = exchange("json/error.json", status=400, upstream=())
LIVE = exchange("json/completion_text.json", upstream=None)
GARBAGE = exchange("json/completion_text.json", upstream=(call(raw=b"\x00not json"),))
LEAKED_KEY = exchange(
    "json/completion_text.json",
    upstream=(
        call(GOOD_BODY, headers={"x-api-key": "<GATEWAY_KEY>", "authorization": "Bearer <GATEWAY_KEY>"}),
    ),
)

GOOD: list[tuple[str, str, Any, Exchange]] = [
    ("upstream_calls", "zero", 0, NONE),
    ("upstream_calls", "range", {"min": 1, "max": 2}, TWO),
    ("upstream", "last-by-default", [{"path": "$.temperature", "absent": True}], TWO),
    ("upstream", "first", [{"path": "$.n", "equals": 1, "call": 0}], TWO),
    ("upstream", "each", [{"path": "$.model", "equals": "claude-sonnet-5-5", "call": "each"}], TWO),
    (
        "upstream",
        "filter",
        [{"path": '$.messages[?@.role=="user"].content[0].text', "contains": "[gc:test]"}],
        ONE,
    ),
    ("upstream_headers", "present", {"Anthropic-Version": {"equals": "2026-10-21"}}, ONE),
    ("upstream_headers", "absent", {"x-api-key": {"absent": True}}, ONE),
    ("upstream_headers", "excludes-when-absent", {"x-api-key": {"excludes": "<GATEWAY_KEY>"}}, ONE),
    ("upstream", "excludes-in-body", [{"path": "$", "excludes": "<GATEWAY_KEY>"}], ONE),
    ("upstream_schema", "valid", "anthropic.messages.request", ONE),
]


@pytest.mark.parametrize(("kind", "label", "expected", "ex"), GOOD, ids=[f"{g[0]}-{g[1]}" for g in GOOD])
def test_good_upstream_passes(kind: str, label: str, expected: Any, ex: Exchange) -> None:
    violations = list(check_for(kind, CHAT)(expected, ex))
    assert violations == [], messages(violations)


BAD: list[tuple[str, str, Any, Exchange, str]] = [
    ("upstream_calls", "refused-but-forwarded", 0, ONE, "made 1 upstream calls, expected 0"),
    ("upstream_calls", "retried-too-often", {"max": 1}, TWO, "made 2 upstream calls"),
    ("upstream_calls", "live", 0, LIVE, "not observed"),
    (
        "upstream",
        "leaked-field",
        [{"path": "$.stream_options", "absent": True, "call": 0}],
        TWO,
        "expected absent",
    ),
    ("upstream", "each-finds-one", [{"path": "$.n", "absent": True, "call": "each"}], TWO, "expected absent"),
    ("upstream", "no-call", [{"path": "$.model", "exists": True}], NONE, "no upstream call"),
    (
        "upstream",
        "call-out-of-range",
        [{"path": "$.model", "exists": True, "call": 5}],
        ONE,
        "no upstream call 5",
    ),
    ("upstream", "not-json", [{"path": "$.model", "exists": True}], GARBAGE, "upstream body is not"),
    ("upstream", "live", [{"path": "$.model", "exists": True}], LIVE, "not observed"),
    ("upstream_headers", "missing", {"x-request-id": {"exists": True}}, ONE, "expected a non-null value"),
    ("upstream_headers", "no-call", {"x-request-id": {"exists": True}}, NONE, "no upstream call"),
    (
        "upstream_headers",
        "key-forwarded",
        {"authorization": {"excludes": "<GATEWAY_KEY>"}},
        LEAKED_KEY,
        "holds text it must not hold",
    ),
    # A path assertion's `excludes` is a matcher like any other (it was once dropped, so it could not fail).
    (
        "upstream",
        "excludes-a-key-in-body",
        [{"path": "$.tools", "excludes": "input_schema"}],
        ONE,
        "holds text it must not hold",
    ),
    ("upstream_schema", "leaky", "anthropic.messages.request", TWO, "'n', 'stream_options' were unexpected"),
    (
        "upstream_schema",
        "temperature-out-of-range",
        "anthropic.messages.request",
        TWO,
        "1.5 is greater than the maximum",
    ),
    ("upstream_schema", "openai-tool-choice", "anthropic.messages.request", TWO, "tool_choice"),
    ("upstream_schema", "not-json", "anthropic.messages.request", GARBAGE, "upstream body is not"),
]


@pytest.mark.parametrize(
    ("kind", "label", "expected", "ex", "message"), BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD]
)
def test_bad_upstream_is_caught(kind: str, label: str, expected: Any, ex: Exchange, message: str) -> None:
    violations = list(check_for(kind, CHAT)(expected, ex))
    assert any(message in v.message or message in v.path for v in violations), messages(violations)


def test_upstream_violation_paths_name_the_call() -> None:
    violations = list(check_for("upstream", CHAT)([{"path": "$.n", "absent": True, "call": 0}], TWO))
    assert [v.path for v in violations] == ["upstream[0].n"]
