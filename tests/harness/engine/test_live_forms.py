"""Live mode's pure parts: the live form of each expectation kind, provoked faults, the `live:` block, the cost
guard, and the structural live checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.checks import run_checks
from harness.engine import live
from harness.engine.costguard import reported_tokens
from harness.engine.live import LIVE_MAX_TOKENS, LiveForm, ScriptedAnswers
from harness.engine.scripted import scripted_answers
from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.spec.model import Needs, Rule, Source


# The live forms are pure: the rule's scripted answers are passed in. These read them from the rule's
# cassette on disk, as the engine does before it runs a rule live.
def live_form(rule: Rule, variant: dict[str, Any]) -> LiveForm:
    return live.live_form(rule, variant, scripted_answers(rule))


def live_expectations(rule: Rule, expect: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    return live.live_expectations(rule, expect, scripted_answers(rule))


def provoked_fault(rule: Rule) -> str | None:
    return live.provoked_fault(rule, scripted_answers(rule))


BODY = {"model": "$MODEL", "messages": [{"role": "user", "content": "What's the weather in Oslo?"}]}


def _rule(expect: dict[str, Any], *, upstream: Any = None, live: Any = None, body: Any = None) -> Rule:
    return Rule(
        id="ezat/x/y",
        level="MUST",
        title="t",
        source=Source("d", "s", "q"),
        request={"body": body or BODY},
        expect=expect,
        needs=Needs(True, frozenset(), frozenset(), frozenset()),
        upstream=upstream,
        live=live,
    )


# --- the live form of each expectation kind -----------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "upstream",
        "upstream_calls",
        "upstream_headers",
        "upstream_schema",
        "upstream_raw",
        "upstream_compare",
        "upstream_path",
        "forwards_headers",
    ],
)
def test_upstream_side_expectations_are_not_observable(key: str) -> None:
    judged, hidden, structural = live_expectations(_rule({}), {"status": 200, key: 1})
    assert judged == {"status": 200} and hidden == [key] and structural == []


def test_a_priced_cost_is_not_observable_live_and_an_unpriced_one_is_judged() -> None:
    """Price times the provider's usage needs the provider's answer, which live mode does not see (it was judged live
    and failed Relay with "no upstream answer to price"); a model without a price must report none, which it does."""
    judged, hidden, _ = live_expectations(_rule({}), {"status": 200, "cost": {"priced": True}})
    assert judged == {"status": 200} and hidden == ["cost"]
    judged, hidden, _ = live_expectations(_rule({}), {"status": 200, "cost": {"priced": False}})
    assert judged == {"status": 200, "cost": {"priced": False}} and hidden == []


def test_stream_matches_nonstream_is_not_comparable_live() -> None:
    judged, hidden, _ = live_expectations(_rule({}), {"status": 200, "stream_matches_nonstream": True})
    assert "stream_matches_nonstream" not in judged and hidden == ["stream_matches_nonstream"]


def test_usage_over_the_scripted_answer_becomes_structural_and_usage_math_stays() -> None:
    usage = {
        "prompt_tokens": "upstream.input_tokens + upstream.cache_read_input_tokens",
        "total_tokens": "usage.prompt_tokens + usage.completion_tokens",
    }
    judged, _, structural = live_expectations(_rule({}), {"usage": usage})
    assert judged == {"usage": {"total_tokens": usage["total_tokens"]}, "live_usage": ["prompt_tokens"]}
    assert structural == ["usage"]


@pytest.mark.parametrize(
    ("matcher", "schema"),
    [
        ({"equals": "${answer.text}"}, {"type": ["string", "null"]}),
        ({"equals": "${answer.usage.output_tokens}"}, {"type": "integer", "minimum": 0}),
        ({"equals": "${answer.id}"}, {"type": "string"}),
        ({"matches": "^${answer.model}$"}, {"type": "string"}),
        ({"contains": "${answer.thinking}"}, {"type": ["string", "null"]}),
    ],
    ids=["text", "usage", "id", "embedded", "thinking"],
)
def test_answer_references_become_structural(matcher: dict[str, Any], schema: dict[str, Any]) -> None:
    judged, _, structural = live_expectations(_rule({}), {"json": [{"path": "$.x", **matcher}]})
    assert judged == {"json": [{"path": "$.x", "schema": schema}]} and structural == ["json"]


def test_client_side_references_are_kept() -> None:
    assertion = {"path": "$.model", "equals": "${request.body.model}"}
    judged, _, structural = live_expectations(_rule({}), {"json": [assertion]})
    assert judged == {"json": [assertion]} and structural == []


def test_not_equals_an_answer_reference_is_dropped() -> None:
    judged, _, _ = live_expectations(_rule({}), {"json": [{"path": "$.id", "not_equals": "${answer.id}"}]})
    assert "json" not in judged


def test_a_literal_from_the_cassette_is_scripted_content() -> None:
    rule = _rule({}, upstream={"cassette": "anthropic/text-basic"})
    text = _cassette_text("anthropic/text-basic")
    judged, _, structural = live_expectations(rule, {"json": [{"path": "$.c", "equals": text}]})
    assert judged["json"] == [{"path": "$.c", "schema": {"type": "string"}}] and structural == ["json"]
    # wire vocabulary and request content are not scripted
    for literal in ("assistant", "Oslo"):
        kept, _, _ = live_expectations(rule, {"json": [{"path": "$.c", "contains": literal}]})
        assert kept["json"] == [{"path": "$.c", "contains": literal}]


def _cassette_text(name: str) -> str:
    from harness.cassette.document import load_named
    from harness.paths import cassettes_dir

    body = json.loads(load_named(name, cassettes_dir()).interactions[0].response.body)
    return str(body["content"][0]["text"])


def test_tool_arguments_are_the_models_to_choose() -> None:
    assertions = [
        {"path": "$.choices[0].message.tool_calls[0].function.arguments", "matches": '"city"\\s*:\\s*"Oslo"'},
        {"path": "$.choices[0].message.tool_calls[0].function.name", "equals": "get_weather"},
    ]
    judged, _, _ = live_expectations(_rule({}), {"json": assertions})
    assert judged["json"][0] == {"path": assertions[0]["path"], "schema": {"type": "string"}}
    assert judged["json"][1] == assertions[1]  # the name is the request's, so it stays
    assert judged["live_tool_arguments"] is True


def test_a_scripted_object_keeps_its_keys() -> None:
    rule = _rule({}, upstream={"cassette": "anthropic/thinking"})
    thinking = json.loads(_anthropic_blocks("anthropic/thinking"))
    judged, _, _ = live_expectations(rule, {"json": [{"path": "$.b", "equals": thinking}]})
    assert judged["json"] == [{"path": "$.b", "schema": {"type": "object", "required": sorted(thinking)}}]


def _anthropic_blocks(name: str) -> str:
    from harness.cassette.document import load_named
    from harness.paths import cassettes_dir

    body = json.loads(load_named(name, cassettes_dir()).interactions[0].response.body)
    return json.dumps(body["content"][0])


def test_headers_body_and_error_messages_from_the_script() -> None:
    rule = _rule({}, upstream={"cassette": "anthropic/text-basic"})
    text = _cassette_text("anthropic/text-basic")
    judged, _, structural = live_expectations(
        rule,
        {
            "headers": {"x-a": {"equals": "${answer.id}"}, "x-b": {"exists": True}},
            "body": {"matches": text},
            "error": {"type": "invalid_request_error", "message": text},
        },
    )
    assert judged["headers"] == {"x-a": {"schema": {"type": "string"}}, "x-b": {"exists": True}}
    assert judged["body"] == {"schema": {"type": "string"}}
    assert judged["error"] == {"type": "invalid_request_error"}
    assert set(structural) == {"headers", "body", "error"}


def test_client_side_kinds_pass_through() -> None:
    expect = {"status": 400, "error": {"message": "n: only 1"}, "stream_order": {}, "finish_reason": "stop"}
    judged, hidden, structural = live_expectations(_rule({}), expect)
    assert judged == expect and hidden == [] and structural == []


# --- provoked faults and the live: block ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("upstream", "reason"),
    [
        (
            {"cassette": "anthropic/text-basic", "fault": {"status": 529}},
            "provoked upstream fault (HTTP 529)",
        ),
        ({"cassette": "anthropic/error-429"}, "the scripted answer is HTTP 429"),
        ({"cassette": "anthropic/refusal"}, "provoked `refusal` answer"),
        ({"cassette": "anthropic/pause-turn"}, "provoked `pause_turn` answer"),
        ({"cassette": "anthropic/stream-error-overloaded"}, "needs a provoked upstream"),
        ({"cassette": "openai/content-filter"}, "provoked `content_filter` answer"),
    ],
    ids=["fault", "error-status", "refusal", "pause-turn", "mid-stream", "content-filter"],
)
def test_rules_needing_a_provoked_fault_are_not_applicable(upstream: dict[str, Any], reason: str) -> None:
    rule = _rule({"status": 200}, upstream=upstream)
    assert reason in (provoked_fault(rule) or "")
    assert reason in (live_form(rule, {}).reason or "")


@pytest.mark.parametrize(
    "cassette", ["anthropic/text-basic", "openai/text-basic", "anthropic/tool-use-single"]
)
def test_ordinary_answers_are_no_fault(cassette: str) -> None:
    assert provoked_fault(_rule({}, upstream={"cassette": cassette})) is None


def test_live_block_adjusts_request_expectations_and_level() -> None:
    rule = _rule(
        {"status": 200, "finish_reason": "length", "upstream_calls": 1},
        upstream={"cassette": "anthropic/max-tokens"},
        live={
            "body": {"max_tokens": 1, "temperature": None},
            "expect": {"json": [{"path": "$.x", "exists": True}]},
        },
        body={**BODY, "temperature": 0.5},
    )
    form = live_form(rule, {})
    assert form.reason is None and form.rule is not None
    assert form.rule.request["body"]["max_tokens"] == 1 and "temperature" not in form.rule.request["body"]
    assert form.rule.expect["finish_reason"] == "length" and form.rule.expect["json"][0]["path"] == "$.x"
    assert form.not_observable == ("upstream_calls",)
    assert form.max_tokens == 1


def test_live_block_not_applicable_and_send_twice() -> None:
    assert live_form(_rule({}, live={"not_applicable": "provider-only fields"}), {}).reason == (
        "not runnable live: provider-only fields"
    )
    form = live_form(_rule({"status": 200}, live={"send_twice": True, "level": "SHOULD"}), {})
    assert form.send_twice and form.requests == 2 and form.rule is not None and form.rule.level == "SHOULD"


def test_a_served_answer_is_at_least_a_valid_completion_in_both_modes() -> None:
    """Issue 20: the generic shape is not added by live mode; run_checks applies it in replay and live alike."""
    from harness.checks import implicit

    form = live_form(_rule({"status": 200, "upstream": []}), {})
    assert form.judged == ("status",) and form.rule is not None and implicit(form.rule.expect)
    assert form.judgment == "shape"
    refused = live_form(_rule({"status": 400, "error": {"type": "invalid_request_error"}}), {})
    assert refused.rule is not None and not implicit(refused.rule.expect)
    assert not implicit({"status": 200, "schema": "openai.models.list"})


def test_specific_counts_only_what_the_rule_itself_judges() -> None:
    """`status` and structural live forms are not the rule's own judgment; its expectations and its live
    block's are."""
    assert live_form(_rule({"status": 200, "upstream": []}), {}).specific == ()
    assert live_form(_rule({"status": 200, "schema": True}), {}).specific == ("schema",)
    forced = live_form(_rule({"status": 200}, live={"expect": {"finish_reason": "tool_calls"}}), {})
    assert forced.specific == ("finish_reason",) and forced.coverage()["specific"] == ["finish_reason"]
    refused = live_form(_rule({"status": 400, "error": {"type": "invalid_request_error"}}), {})
    assert refused.specific == ("error",)


# --- cost guard ------------------------------------------------------------------------------------------


def test_successful_requests_get_a_small_max_tokens() -> None:
    form = live_form(_rule({"status": 200}), {})
    assert form.rule is not None and form.rule.request["body"]["max_tokens"] == LIVE_MAX_TOKENS
    small = live_form(_rule({"status": 200}, body={**BODY, "max_completion_tokens": 5}), {})
    assert small.rule is not None and small.rule.request["body"] == {**BODY, "max_completion_tokens": 5}
    refused = live_form(_rule({"status": 400}, body={**BODY, "max_tokens": 10**9}), {})
    assert refused.rule is not None and refused.rule.request["body"]["max_tokens"] == 10**9
    assert refused.max_tokens == 0  # a refusal produces no tokens


def _exchange(body: Any, request: Any = None, status: int = 200) -> Exchange:
    raw = json.dumps(body).encode()
    sent = request or {"model": "m", "messages": []}
    return Exchange(
        rule_id="ezat/x/y",
        variant={},
        request=SentRequest("POST", "http://g/v1/chat/completions", {}, json.dumps(sent).encode(), sent),
        response=ReceivedResponse(status, {"content-type": "application/json"}, raw),
    )


def _completion(message: dict[str, Any], usage: Any = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        "usage": usage,
    }


def test_reported_tokens_add_up_what_the_gateway_said() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert reported_tokens(_exchange(_completion({"content": "x"}, usage))) == {
        "prompt_tokens": 7,
        "completion_tokens": 3,
    }
    assert reported_tokens(_exchange({"error": {}}, status=400)) == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }


# --- the structural live checks -------------------------------------------------------------------------


def _violations(kind: str, expected: Any, exchange: Exchange) -> list[str]:
    return [v.message for v in run_checks({kind: expected}, exchange)]


def test_live_usage() -> None:
    good = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert _violations("live_usage", ["prompt_tokens"], _exchange(_completion({"content": "x"}, good))) == []
    bad = {"prompt_tokens": -1, "completion_tokens": 3, "total_tokens": 10}
    messages = _violations("live_usage", ["prompt_tokens"], _exchange(_completion({"content": "x"}, bad)))
    assert any("prompt_tokens is -1" in m for m in messages) and any(
        "!= prompt_tokens" in m for m in messages
    )
    assert _violations("live_usage", ["prompt_tokens"], _exchange(_completion({"content": "x"})))


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def _tool_answer(name: str, arguments: str) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return _completion({"content": None, "tool_calls": [call]})


@pytest.mark.parametrize(
    ("name", "arguments", "problem"),
    [
        ("get_weather", '{"city": "Oslo"}', None),
        ("get_weather", "{}", "'city' is a required property"),
        ("get_weather", "not json", "not a JSON object"),
        ("get_time", '{"city": "Oslo"}', "no tool of the request"),
    ],
    ids=["valid", "missing-required", "not-json", "unknown-tool"],
)
def test_live_tool_arguments(name: str, arguments: str, problem: str | None) -> None:
    request = {"model": "m", "messages": [], "tools": TOOLS}
    messages = _violations("live_tool_arguments", True, _exchange(_tool_answer(name, arguments), request))
    assert (messages == []) if problem is None else any(problem in m for m in messages)


def test_live_tool_arguments_names_the_forced_tool() -> None:
    request = {"model": "m", "messages": [], "tools": TOOLS}
    exchange = _exchange(_tool_answer("get_weather", '{"city": "x"}'), request)
    assert _violations("live_tool_arguments", {"name": "get_weather"}, exchange) == []
    assert _violations("live_tool_arguments", {"name": "get_time"}, exchange)


def test_live_response_format_and_text() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    request = {
        "model": "m",
        "messages": [],
        "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
    }
    assert (
        _violations("live_response_format", True, _exchange(_completion({"content": '{"n": 1}'}), request))
        == []
    )
    assert _violations(
        "live_response_format", True, _exchange(_completion({"content": '{"n": "x"}'}), request)
    )
    assert _violations("live_response_format", True, _exchange(_completion({"content": "prose"}), request))
    assert _violations("live_text", True, _exchange(_completion({"content": "hi"}))) == []
    assert _violations("live_text", True, _exchange(_completion({"content": ""})))


def test_live_coverage_rows_count_what_each_result_judged() -> None:
    from harness.report import live as live_report

    def result(area: str, outcome: str, specific: list[str] | None) -> dict[str, Any]:
        coverage = (
            None
            if specific is None
            else {
                "judged": ["status"],
                "not_observable": ["upstream"],
                "specific": specific,
                "repeat": 1,
                "passed": 1,
            }
        )
        return {"area": area, "outcome": outcome, **({"live_coverage": coverage} if coverage else {})}

    document = {
        "target": {"upstream": "live", "gateway_url": "http://127.0.0.1:1/v1", "repeat": 1},
        "profile": {"name": "ezat"},
        "results": [
            result("tools", "PASS", ["finish_reason"]),
            result("tools", "PASS", []),
            result("tools", "NOT_APPLICABLE", None),
            result("ignore", "PASS", []),
        ],
    }
    rows = dict(live_report.coverage_rows(document))
    assert rows["tools"] == {"specific": 1, "structural": 0, "shape": 1, "not_live": 1}
    assert rows["(all)"]["specific"] == 1 and rows["ignore"]["shape"] == 1
    assert live_report.share(rows["tools"]) == "1 (33.3%)"
    assert "status and shape only" in live_report.text_table([document])
    assert "| tools | 1 | 0 | 1 | 1 |" in live_report.markdown_section(document)
    assert live_report.pass_word(document["results"][1]) == "PASS (status and shape only)"
    assert live_report.pass_word(document["results"][0]) == "PASS"


def test_live_forms_judge_the_answers_passed_in_not_the_disk() -> None:
    """Pure: a cassette name that is on no disk, with its answers given, is judged by those answers."""
    rule = _rule({"status": 200}, upstream={"cassette": "nowhere/not-on-disk"})
    assert scripted_answers(rule) == ()
    refused: ScriptedAnswers = ((429, '{"type":"error"}'),)
    assert "HTTP 429" in (live.provoked_fault(rule, refused) or "")
    assert live.provoked_fault(rule, ()) is None
    assert live.live_form(rule, {}, refused).reason == live.provoked_fault(rule, refused)
    assert live.live_form(rule, {}, ()).reason is None
