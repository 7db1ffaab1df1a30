"""The judge and the verdict per client: pure, table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from harness.clients.judge import (
    BROKEN,
    INCOMPLETE,
    LIMITED,
    NOT_RUN,
    READY,
    client_verdict,
    judge,
    worst_verdict,
)
from harness.clients.observation import Observation, Raised, ToolCall
from harness.clients.scenarios import load_scenarios

CATALOG = load_scenarios()
TOOL_ID = "toolu_0189MAW5XnAWzQd8NhVIZZUd"
RATE = Raised("rate_limit", "openai.RateLimitError", 429, "Error code: 429")


def _anthropic_turn2(tool_id: str) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": "[gc:x#abcdef] weather"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tool_id, "name": "get_weather", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "{}"}]},
        ]
    }


def _openai_turn2(tool_id: str) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant"},
            {"role": "tool", "tool_call_id": tool_id},
        ]
    }


WEATHER = ToolCall("call_1", "get_weather", {"city": "Oslo"})
TIME = ToolCall("call_2", "get_time", {"timezone": "Europe/Paris"})
CASES: list[tuple[str, str, Observation, list[Any], list[str]]] = [
    ("text-ok", "text", Observation(text="Hello from the scripted provider."), [{}], []),
    ("text-wrong", "text", Observation(text="Hello from the scripted"), [{}], ["text"]),
    ("text-raised", "text", Observation(error=RATE), [{}], ["raised"]),
    ("stream-empty", "stream-text", Observation(text=""), [{}], ["text"]),
    ("tools-ok-anthropic", "tool-round-trip", Observation(text="It is 7 degrees in Oslo.", tool_calls=(WEATHER,)),
     [{}, _anthropic_turn2(TOOL_ID)], []),
    ("tools-ok-openai", "tool-round-trip", Observation(text="It is 7 degrees in Oslo.", tool_calls=(WEATHER,)),
     [{}, _openai_turn2(TOOL_ID)], []),
    ("tools-id-lost", "tool-round-trip", Observation(text="It is 7 degrees in Oslo.", tool_calls=(WEATHER,)),
     [{}, _anthropic_turn2("toolu_other")], ["tool_result_ids"]),
    ("tools-no-second-turn", "tool-round-trip", Observation(text="It is 7 degrees in Oslo.", tool_calls=(WEATHER,)),
     [{}], ["tool_result_ids"]),
    ("tools-args-string", "tool-round-trip",
     Observation(text="It is 7 degrees in Oslo.", tool_calls=(ToolCall("c", "get_weather", '{"city": "Os'),)),
     [{}, _anthropic_turn2(TOOL_ID)], ["tool_calls"]),
    ("tools-no-id", "tool-round-trip",
     Observation(text="It is 7 degrees in Oslo.", tool_calls=(ToolCall(None, "get_weather", {"city": "Oslo"}),)),
     [{}, _anthropic_turn2(TOOL_ID)], ["tool_calls.id"]),
    ("parallel-ok", "parallel-tools-stream", Observation(tool_calls=(WEATHER, TIME)), [{}], []),
    ("parallel-merged", "parallel-tools-stream",
     Observation(tool_calls=(ToolCall("c", "get_weather", '{"city": "Oslo"}{"timezone": "Europe/Paris"}'),)),
     [{}], ["tool_calls"]),
    ("parsed-ok", "structured-output", Observation(parsed={"city": "Oslo", "temperature_c": 7}), [{}], []),
    ("parsed-none", "structured-output", Observation(parsed=None, text="{}"), [{}], ["parsed"]),
    ("usage-ok", "stream-usage",
     Observation(text="Hello from the scripted provider.", usage={"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 30}),
     [{}], []),
    ("usage-missing", "stream-usage", Observation(text="Hello from the scripted provider."), [{}], ["usage"]),
    ("usage-total-wrong", "stream-usage",
     Observation(text="Hello from the scripted provider.", usage={"prompt_tokens": 21, "completion_tokens": 9, "total_tokens": 9}),
     [{}], ["usage"]),
    ("rate-limit-ok", "rate-limit", Observation(error=RATE), [{}], []),
    ("rate-limit-generic", "rate-limit", Observation(error=Raised("api_error", "openai.APIStatusError", 503, "x")),
     [{}], ["error.kind", "error.status"]),
    ("rate-limit-returned", "rate-limit", Observation(text="Hello"), [{}], ["error"]),
    ("retry-ok", "rate-limit-retry", Observation(text="Hello from the scripted provider."), [{}, {}], []),
    ("retry-not-retried", "rate-limit-retry", Observation(error=RATE), [{}], ["raised", "upstream_calls"]),
    ("auth-ok", "auth", Observation(error=Raised("authentication", "openai.AuthenticationError", 401, "x")), [], []),
    ("auth-forwarded", "auth", Observation(error=Raised("authentication", "openai.AuthenticationError", 401, "x")),
     [{}], ["upstream_calls"]),
    ("mid-stream-raised", "mid-stream-error", Observation(error=Raised("api_error", "openai.APIError", None, "x")), [{}], []),
    ("mid-stream-silent", "mid-stream-error", Observation(text="Hello from "), [{}], ["error"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("scenario", "seen", "bodies", "checks"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_judge_finds_exactly_these_violations(
    scenario: str, seen: Observation, bodies: list[Any], checks: list[str]
) -> None:
    found = [v.check for v in judge(CATALOG.scenario(scenario), seen, bodies, [200] * len(bodies))]
    assert found == checks


def test_a_mid_stream_error_must_follow_a_started_stream() -> None:
    """A provider 400 (the gateway sent what the provider refuses) raises too; that is not the scenario."""
    refused = Observation(error=Raised("api_error", "openai.BadRequestError", 400, "max_tokens: required"))
    found = [v.check for v in judge(CATALOG.scenario("mid-stream-error"), refused, [{}], [400])]
    assert found == ["provider_status"]
    assert not list(judge(CATALOG.scenario("mid-stream-error"), refused, [{}], [200]))


VERDICTS = [
    ("all-pass", {"text": "PASS", "auth": "PASS"}, READY),
    ("pass-and-na", {"text": "PASS", "structured-output": "NOT_APPLICABLE"}, READY),
    ("one-fail", {"text": "PASS", "auth": "FAIL"}, LIMITED),
    ("xfail-still-limited", {"text": "PASS", "auth": "XFAIL"}, LIMITED),
    ("basic-fails", {"text": "FAIL", "auth": "PASS"}, BROKEN),
    ("nothing-passes", {"stream-text": "FAIL", "auth": "FAIL"}, BROKEN),
    ("skipped", {"text": "SKIP", "auth": "SKIP"}, NOT_RUN),
    ("harness-error", {"text": "PASS", "auth": "HARNESS_ERROR"}, INCOMPLETE),
    ("only-harness-errors", {"text": "HARNESS_ERROR"}, INCOMPLETE),
]


@pytest.mark.parametrize(("outcomes", "verdict"), [v[1:] for v in VERDICTS], ids=[v[0] for v in VERDICTS])
def test_client_verdict(outcomes: dict[str, str], verdict: str) -> None:
    assert client_verdict(outcomes) == verdict


def test_worst_verdict_over_profiles() -> None:
    assert worst_verdict([READY, LIMITED, READY]) == LIMITED
    assert worst_verdict([READY, NOT_RUN]) == READY
    assert worst_verdict([BROKEN, LIMITED]) == BROKEN
    assert worst_verdict([]) == NOT_RUN
