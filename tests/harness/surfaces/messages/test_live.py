"""Live forms of the Messages surface (harness/surfaces/messages/live.py): structural checks any honest answer
passes, and that a broken one fails."""

from __future__ import annotations

import json
from typing import Any

from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.surfaces.messages.live import check_live_text, check_live_tool_arguments, check_live_usage

TOOLS = [
    {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


def exchange(message: Any, status: int = 200) -> Exchange:
    request = SentRequest("POST", "http://gw/v1/messages", {}, b"{}", {"tools": TOOLS})
    response = ReceivedResponse(status, {"content-type": "application/json"}, json.dumps(message).encode())
    return Exchange("r", {}, request, response, surface="messages")


def call(name: str, value: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": value}


def messages(check: Any, expected: Any, message: Any) -> list[str]:
    return [v.message for v in check(expected, exchange(message))]


def test_an_honest_tool_call_passes_and_a_broken_one_is_named() -> None:
    assert (
        messages(check_live_tool_arguments, True, {"content": [call("get_weather", {"city": "Oslo"})]}) == []
    )
    assert messages(check_live_tool_arguments, True, {"content": [call("get_time", {})]}) == [
        "a tool the request did not declare"
    ]
    assert messages(
        check_live_tool_arguments, True, {"content": [call("get_weather", '{"city": "Oslo"}')]}
    ) == ["input is not an object"]
    assert messages(check_live_tool_arguments, True, {"content": [call("get_weather", {})]}) == [
        "'city' is a required property"
    ]
    assert messages(
        check_live_tool_arguments, {"name": "get_weather"}, {"content": [{"type": "text", "text": "no"}]}
    ) == ["the forced tool was not called"]


def test_usage_counts_must_be_non_negative_integers() -> None:
    assert (
        messages(
            check_live_usage,
            ["input_tokens", "cache_read_input_tokens"],
            {"content": [], "usage": {"input_tokens": 3}},
        )
        == []
    )
    assert messages(check_live_usage, ["input_tokens"], {"content": [], "usage": {"input_tokens": "3"}}) == [
        "usage.input_tokens is a string"
    ]
    assert messages(check_live_usage, ["output_tokens"], {"content": [], "usage": {"output_tokens": -1}}) == [
        "usage.output_tokens is a negative number"
    ]
    assert messages(check_live_usage, ["input_tokens"], {"content": []}) == ["the Message has no usage"]


def test_text_is_needed_unless_the_answer_calls_a_tool() -> None:
    assert messages(check_live_text, True, {"content": [{"type": "text", "text": "Hi"}]}) == []
    assert messages(check_live_text, True, {"content": [call("get_weather", {"city": "Oslo"})]}) == []
    assert messages(check_live_text, True, {"content": []}) == ["the answer has no text"]
    assert [v.message for v in check_live_text(True, exchange({"content": []}, status=500))] == [
        "no answer to judge"
    ]
