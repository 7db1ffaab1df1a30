"""Matchers, references, usage expressions, the assembled completion and the upstream-answer summary."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checks import answer, expr
from harness.checks.matchers import match_values
from harness.checks.refs import References
from harness.errors import RefError
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat
from harness.values import json_equal
from tests.harness.checks.exchanges import exchange, fixture, served

EX = exchange("json/completion_text.json", answer="upstream/anthropic_tools.sse", models={"MODEL": "m-1"})
REFS = References(EX)

MATCHERS = [
    # (matcher, values, holds)
    ({"equals": 1}, [1.0], True),
    ({"equals": 1}, [True], False),
    ({"equals": {"a": [1, None]}}, [{"a": [1, None]}], True),
    ({"not_equals": "x"}, ["y"], True),
    ({"absent": True}, [], True),
    ({"absent": True}, [None, None], True),
    ({"absent": True}, [None, 0], False),
    ({"exists": True}, [None], False),
    ({"exists": True}, [None, 0], True),
    ({"matches": "^chat"}, ["chatcmpl-1"], True),
    ({"matches": "^chat"}, [5], False),
    ({"matches": "("}, ["x"], False),
    ({"type": "integer"}, [2.0], True),
    ({"type": "integer"}, [True], False),
    ({"type": "number"}, [2], True),
    ({"type": "object"}, [[]], False),
    ({"length": 2}, [[1, 2], "ab", {"a": 1, "b": 2}], True),
    ({"length": 2}, [5], False),
    ({"contains": "lo"}, ["hello"], True),
    ({"contains": {"a": 1}}, [[{"a": 1.0}]], True),
    ({"contains": 1}, [{"a": 1}], False),
    ({"one_of": ["stop", "length"]}, ["length"], True),
    ({"schema": {"type": "string", "minLength": 2}}, ["a"], False),
    ({"schema": {"type": "nonsense"}}, ["a"], False),
    ({"equals": 1}, [], False),
    ({"equals": "${model.MODEL}"}, ["m-1"], True),
    ({"equals": "${answer.usage.output_tokens}"}, [65], True),
    ({"matches": "^${request.body.model}$"}, ["anthropic/claude-sonnet-5-5"], True),
    ({"contains": "${answer.tool_uses.0.name}"}, ["call get_weather now"], True),
    ({"one_of": ["${answer.stop_reason}", "x"]}, ["tool_use"], True),
]


@pytest.mark.parametrize(
    ("matcher", "values", "holds"), MATCHERS, ids=[f"{next(iter(m[0]))}-{i}" for i, m in enumerate(MATCHERS)]
)
def test_matchers(matcher: dict[str, Any], values: list[Any], holds: bool) -> None:
    violations = list(match_values(matcher, values, check="json", path="$.x", refs=REFS))
    assert (violations == []) is holds, violations


def test_json_equal_is_json_not_python() -> None:
    assert json_equal([1, {"a": 2.0}], [1.0, {"a": 2}])
    assert not json_equal(0, False) and not json_equal("1", 1) and not json_equal(None, 0)


REFERENCES = [
    ("${request.body.messages.0.role}", "user"),
    ("${request.body.model}", "anthropic/claude-sonnet-5-5"),
    ("${request.headers.Content-Type}", "application/json"),
    ("${response.headers.content-type}", "application/json"),
    ("${model.MODEL}", "m-1"),
    ("${answer.id}", "msg_01GcText"),
    ("${answer.text}", "Checking both."),
    ("${answer.stop_reason}", "tool_use"),
    ("${answer.usage.input_tokens}", 100),
    ("${answer.usage.cache_read_input_tokens}", 1000),
    ("${answer.usage.thinking_tokens}", 7),
    ("${answer.tool_uses.0.id}", "toolu_01A"),
    ("${answer.tool_uses.0.arguments}", '{"location":"Paris"}'),
    ("${answer.tool_uses.1.arguments}", "{}"),
    ("id ${answer.id} / ${answer.usage.output_tokens}", "id msg_01GcText / 65"),
]


@pytest.mark.parametrize(("text", "value"), REFERENCES, ids=[r[0] for r in REFERENCES])
def test_references(text: str, value: Any) -> None:
    assert REFS.resolve(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "${request.body.nope}",
        "${model.OTHER}",
        "${answer.tool_uses.9.id}",
        "${answer.nope}",
        "${bogus}",
        "${request.headers.x}",
    ],
)
def test_unresolvable_references_raise_ref_error(text: str) -> None:
    with pytest.raises(RefError):
        REFS.resolve(text)


def test_unresolvable_reference_in_a_matcher_is_a_violation() -> None:
    (violation,) = match_values(
        {"equals": "${answer.id}"}, ["x"], check="json", path="$", refs=References(exchange(b"{}"))
    )
    assert "no upstream answer" in violation.message


def test_resolve_does_not_mutate() -> None:
    value = {"a": ["${model.MODEL}"]}
    assert REFS.resolve(value) == {"a": ["m-1"]} and value == {"a": ["${model.MODEL}"]}


EXPRESSIONS = [
    ("upstream.a + upstream.b * 2", 7),
    ("(upstream.a + upstream.b) * 2", 8),
    ("usage.x.y - 1", 9),
    ("-upstream.a + 10", 9),
    (42, 42),
]
NAMES = {"upstream.a": 1, "upstream.b": 3, "usage.x.y": 10}


@pytest.mark.parametrize(("text", "value"), EXPRESSIONS, ids=[str(e[0]) for e in EXPRESSIONS])
def test_expressions(text: str | int, value: int) -> None:
    assert expr.evaluate(text, NAMES.__getitem__) == value


@pytest.mark.parametrize(
    "text",
    [
        "upstream.a / 2",
        "upstream.a ** 2",
        "__import__('os')",
        "upstream",
        "other.a",
        "1.5",
        "upstream.a[0]",
        "a if b else c",
        "",
        "upstream.a +",
    ],
)
def test_expressions_outside_the_grammar(text: str) -> None:
    with pytest.raises(expr.ExprError):
        expr.evaluate(text, NAMES.__getitem__)


def test_assembled_completion_from_tool_stream() -> None:
    view = reading.stream_view(fixture("sse/tools_parallel.sse"), chat.DONE)
    assembled = chat.assemble(chat.completion_chunks(view))
    assert assembled["id"] == "chatcmpl-gc0001"
    (choice,) = assembled["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Checking both."
    assert [c["function"]["arguments"] for c in choice["message"]["tool_calls"]] == [
        '{"location": "Paris"}',
        '{"tz": "Europe/Paris"}',
    ]
    assert assembled["usage"]["total_tokens"] == 480


def test_assembled_completion_of_garbage() -> None:
    assembled = chat.assemble([1, "x", {"choices": "no"}, {"choices": [None, {"delta": 5}]}])
    assert assembled["id"] is None and assembled["usage"] is None


SUMMARIES = [
    (
        "upstream/anthropic_text.json",
        "Hello there!",
        "end_turn",
        {"input_tokens": 100, "thinking_tokens": 20},
        0,
    ),
    (
        "upstream/anthropic_tools.sse",
        "Checking both.",
        "tool_use",
        {"output_tokens": 65, "cache_read_input_tokens": 1000},
        2,
    ),
    (
        "upstream/openai_completion.json",
        "Hi!",
        "tool_calls",
        {
            "input_tokens": 100,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "thinking_tokens": 20,
        },
        1,
    ),
    (
        "upstream/openai_stream.sse",
        "Checking both.",
        "tool_calls",
        {"input_tokens": 400, "output_tokens": 80},
        2,
    ),
]


@pytest.mark.parametrize(("name", "text", "stop", "usage", "tools"), SUMMARIES, ids=[s[0] for s in SUMMARIES])
def test_upstream_answer_summary(name: str, text: str, stop: str, usage: dict[str, int], tools: int) -> None:
    summary = answer.summarize(served(name))
    assert summary is not None
    assert (summary.text, summary.stop_reason, len(summary.tool_uses)) == (text, stop, tools)
    assert {k: summary.usage[k] for k in usage} == usage


def test_upstream_error_body_has_no_summary() -> None:
    assert answer.summarize(served("json/error.json")) is None


def test_assembled_completion_keeps_extension_text_fields() -> None:
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
        },
        {
            "id": "c",
            "choices": [{"index": 0, "delta": {"reasoning_content": "Let me "}, "finish_reason": None}],
        },
        {
            "id": "c",
            "choices": [{"index": 0, "delta": {"reasoning_content": "think."}, "finish_reason": None}],
        },
        {"id": "c", "choices": [{"index": 0, "delta": {"content": "4"}, "finish_reason": None}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    message = chat.assemble(chunks)["choices"][0]["message"]
    assert message["reasoning_content"] == "Let me think."
    assert message["content"] == "4"
