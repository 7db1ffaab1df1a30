"""Client-side checks on golden answers: status, headers, body, json, finish_reason, error, schema, usage, chunks."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checks import check_for
from harness.exchange import Exchange
from harness.surfaces.chat_completions import SURFACE as CHAT
from tests.harness.checks.exchanges import exchange, messages, stream

TEXT = exchange("json/completion_text.json")
TOOLS = exchange("json/completion_tools.json")
ERROR = exchange("json/error.json", status=400)
CACHED = {"answer": "upstream/anthropic_text.json"}

USAGE_RULE = {
    "prompt_tokens": "upstream.input_tokens + upstream.cache_read_input_tokens + upstream.cache_creation_input_tokens",
    "completion_tokens": "upstream.output_tokens",
    "total_tokens": "usage.prompt_tokens + usage.completion_tokens",
    "prompt_tokens_details.cached_tokens": "upstream.cache_read_input_tokens",
    "prompt_tokens_details.cache_write_tokens": "upstream.cache_creation_input_tokens",
    "completion_tokens_details.reasoning_tokens": "upstream.thinking_tokens",
}

GOOD: list[tuple[str, str, Any, Exchange]] = [
    ("status", "int", 200, TEXT),
    ("status", "list", [400, 422], ERROR),
    ("headers", "equals-case-insensitive", {"Content-Type": {"equals": "application/json"}}, TEXT),
    ("headers", "absent", {"retry-after": {"absent": True}}, TEXT),
    ("headers", "every-header-excludes", {"*": {"excludes": "removed-params"}}, TEXT),
    ("headers", "every-header-as-name-value", {"*": {"matches": "^[a-z0-9-]+: "}}, TEXT),
    ("body", "contains", {"contains": "Hello there!"}, TEXT),
    ("json", "equals", [{"path": "$.choices[0].message.content", "equals": "Hello there!"}], TEXT),
    ("json", "ref-keeps-type", [{"path": "$.model", "equals": "${request.body.model}"}], TEXT),
    ("json", "stream-filter", [{"path": "$.nothing", "exists": True, "stream": True}], TEXT),
    (
        "json",
        "assembled-text",
        [{"path": "$.choices[0].message.content", "equals": "Hello there!"}],
        stream("text"),
    ),
    (
        "json",
        "assembled-tools",
        [
            {
                "path": "$.choices[0].message.tool_calls[*].function.name",
                "one_of": ["get_weather", "get_time"],
            },
            {"path": "$.choices[0].message.tool_calls", "length": 2},
            {
                "path": "$.choices[0].message.tool_calls[1].function.arguments",
                "equals": '{"tz": "Europe/Paris"}',
            },
            {"path": "$.usage.total_tokens", "equals": 480},
        ],
        stream("tools_parallel", include_usage=True),
    ),
    ("finish_reason", "json", "stop", TEXT),
    ("finish_reason", "stream", "tool_calls", stream("tools_parallel")),
    ("finish_reason", "assembled-ignores-empty-string", "stop", stream("finish_empty_string")),
    (
        "error",
        "all-fields",
        {
            "type": "invalid_request_error",
            "param": "n",
            "code": None,
            "message": "n: only 1 choice per request is supported",
        },
        ERROR,
    ),
    ("error", "pattern", {"message_pattern": "^n: only 1"}, ERROR),
    (
        "error",
        "mid-stream",
        {"type": "server_error", "code": "upstream_overloaded"},
        stream("error_then_done"),
    ),
    ("schema", "completion", True, TEXT),
    ("schema", "tools", True, TOOLS),
    ("schema", "error", True, ERROR),
    ("schema", "chunks", True, stream("tools_parallel")),
    ("schema", "chunks-and-error-event", True, stream("error_then_done")),
    ("schema", "named", "openai.models.list", exchange("json/models.json")),
    ("usage", "json", USAGE_RULE, exchange("json/completion_text.json", **CACHED)),
    ("usage", "stream", USAGE_RULE, stream("text_usage", include_usage=True, **CACHED)),
    ("usage", "integer-literal", {"total_tokens": 1350}, TEXT),
    (
        "chunks",
        "indexing",
        [
            {"path": "$[0].choices[0].delta.role", "equals": "assistant"},
            {"path": "$[-1].choices", "length": 0},
        ],
        stream("text_usage"),
    ),
    ("chunks", "every-id", [{"path": "$[*].id", "equals": "chatcmpl-gc0001"}], stream("text")),
]


@pytest.mark.parametrize(("kind", "label", "expected", "ex"), GOOD, ids=[f"{g[0]}-{g[1]}" for g in GOOD])
def test_good_answers_pass(kind: str, label: str, expected: Any, ex: Exchange) -> None:
    violations = list(check_for(kind, CHAT)(expected, ex))
    assert violations == [], messages(violations)


BAD: list[tuple[str, str, Any, Exchange, str]] = [
    ("status", "wrong", 200, ERROR, "status 400"),
    (
        "status",
        "no-response",
        200,
        exchange(b"", status=None, transport_error="connection reset"),
        "connection reset",
    ),
    ("headers", "missing", {"x-request-id": {"exists": True}}, TEXT, "expected a non-null value"),
    ("headers", "regex", {"content-type": {"matches": "^text/event-stream"}}, TEXT, "does not match"),
    (
        "headers",
        "every-header-names-one",
        {"*": {"excludes": "content-type: application/json"}},
        TEXT,
        "must not hold",
    ),
    ("body", "garbage", {"contains": "error"}, exchange(b"\xff\xfe<html>"), "substring not found"),
    (
        "json",
        "not-json",
        [{"path": "$.id", "exists": True}],
        exchange(b"<html>502</html>", status=502),
        "not JSON",
    ),
    (
        "json",
        "type",
        [{"path": "$.choices[0].message.tool_calls[0].function.arguments", "type": "string"}],
        exchange("json/completion_arguments_object.json"),
        "expected type string, got object",
    ),
    (
        "json",
        "assembled-arguments-object",
        [{"path": "$.choices[0].message.tool_calls[0].function.arguments", "type": "string"}],
        stream("tool_arguments_object"),
        "expected type string",
    ),
    (
        "json",
        "nothing-matched",
        [{"path": "$.choices[0].message.refusal", "equals": "no"}],
        TEXT,
        "not equal",
    ),
    ("json", "bad-path", [{"path": "$[", "exists": True}], TEXT, "bad JSONPath"),
    ("json", "unresolvable-ref", [{"path": "$.id", "equals": "${answer.id}"}], TEXT, "no upstream answer"),
    (
        "finish_reason",
        "end_turn",
        "stop",
        exchange("json/completion_finish_end_turn.json"),
        "not an OpenAI finish_reason",
    ),
    ("finish_reason", "no-finish-chunk", "stop", stream("no_finish"), "finish_reason None"),
    ("finish_reason", "no-choices", "stop", exchange(b'{"choices": []}'), "no choices[0]"),
    (
        "error",
        "flat",
        {"type": "invalid_request_error"},
        exchange("json/error_flat.json", status=400),
        "a flat error body",
    ),
    (
        "error",
        "without-param",
        {},
        exchange("json/error_without_param.json", status=400),
        "error.param is missing",
    ),
    (
        "error",
        "code-integer",
        {},
        exchange("json/error_code_integer.json", status=400),
        "error.code is a integer",
    ),
    ("error", "wrong-message", {"message": "something else"}, ERROR, "error.message differs"),
    ("error", "no-error-event", {}, stream("text"), "carries no error event"),
    ("error", "html", {}, exchange(b"<html>502</html>", status=502), "not JSON"),
    (
        "schema",
        "arguments-object",
        True,
        exchange("json/completion_arguments_object.json"),
        "is not of type 'string'",
    ),
    ("schema", "finish-end-turn", True, exchange("json/completion_finish_end_turn.json"), "is not one of"),
    (
        "schema",
        "error-code-int",
        True,
        exchange("json/error_code_integer.json", status=400),
        "400 is not of type",
    ),
    (
        "schema",
        "error-flat",
        True,
        exchange("json/error_flat.json", status=400),
        "'error' is a required property",
    ),
    ("schema", "error-body-with-200", True, exchange("json/error.json"), "'id' is a required property"),
    ("schema", "chunk-finish-empty", True, stream("finish_empty_string"), "'' is not one of"),
    ("schema", "chunk-index-missing", True, stream("tool_index_missing"), "'index' is a required property"),
    ("schema", "chunk-ping-rewrapped", True, stream("ping_rewrapped"), "data is not JSON"),
    ("schema", "unknown-schema", "no.such.schema", TEXT, "cannot load wire schema"),
    (
        "usage",
        "prompt-without-cache",
        USAGE_RULE,
        exchange("json/completion_prompt_without_cache.json", **CACHED),
        "usage.prompt_tokens = 100, expected upstream.input_tokens",
    ),
    (
        "usage",
        "cached-tokens-dropped",
        USAGE_RULE,
        exchange("json/completion_prompt_without_cache.json", **CACHED),
        "usage.prompt_tokens_details.cache_write_tokens is missing",
    ),
    (
        "usage",
        "total-not-sum",
        USAGE_RULE,
        exchange("json/completion_total_not_sum.json", **CACHED),
        "usage.total_tokens = 1349, expected usage.prompt_tokens + usage.completion_tokens = 1350",
    ),
    ("usage", "no-usage-chunk", USAGE_RULE, stream("text", **CACHED), "no usage chunk"),
    ("usage", "no-upstream", {"prompt_tokens": "upstream.input_tokens"}, TEXT, "no upstream answer"),
    (
        "usage",
        "bad-expression",
        {"prompt_tokens": "upstream.input_tokens / 2"},
        exchange("json/completion_text.json", **CACHED),
        "not allowed in a usage expression",
    ),
    (
        "usage",
        "unknown-name",
        {"prompt_tokens": "upstream.bogus"},
        exchange("json/completion_text.json", **CACHED),
        "unknown upstream usage field",
    ),
    ("chunks", "not-a-stream", [{"path": "$[0]", "exists": True}], TEXT, "not a stream"),
    (
        "chunks",
        "every-chunk",
        [{"path": "$[*].id", "equals": "chatcmpl-0"}],
        stream("id_changes"),
        "not equal",
    ),
]


@pytest.mark.parametrize(
    ("kind", "label", "expected", "ex", "message"), BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD]
)
def test_bad_answers_are_caught(kind: str, label: str, expected: Any, ex: Exchange, message: str) -> None:
    violations = list(check_for(kind, CHAT)(expected, ex))
    assert any(message in v.message for v in violations), messages(violations)
    assert all(v.check == kind for v in violations)


def test_usage_violation_explains_the_expression() -> None:
    ex = exchange("json/completion_prompt_without_cache.json", **CACHED)
    (violation,) = check_for("usage", CHAT)({"prompt_tokens": USAGE_RULE["prompt_tokens"]}, ex)
    assert (violation.path, violation.expected, violation.actual) == ("usage.prompt_tokens", 1300, 100)
    assert "upstream.cache_read_input_tokens=1000" in violation.message


def test_large_actual_values_are_truncated() -> None:
    big = exchange(b'{"x": "' + b"a" * 5000 + b'"}', status=500)
    (violation,) = check_for("status", CHAT)(200, big)
    assert len(violation.message) < 400


def test_schema_matchers_take_references() -> None:
    """`${model.ROLE}` inside an inline schema is the mapped id: a list with it passes, one without fails."""
    listing = b'{"object":"list","data":[{"id":"m-1","object":"model"},{"id":"m-2","object":"model"}]}'
    wanted = [{"path": "$.data", "schema": {"contains": {"properties": {"id": {"const": "${model.MODEL}"}}}}}]
    assert not list(check_for("json", CHAT)(wanted, exchange(listing, models={"MODEL": "m-2"})))
    violations = list(check_for("json", CHAT)(wanted, exchange(listing, models={"MODEL": "m-3"})))
    assert violations, "a list without the mapped model id must fail"
