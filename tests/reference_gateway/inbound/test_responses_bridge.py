"""reference_gateway/inbound/responses_bridge.py: a Responses request as a chat body, a completion or chunk stream
back as a Response or its events — and what cannot be carried refused, not dropped."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.surfaces.responses.stream_order import check_stream_order
from reference_gateway.inbound import responses_bridge as bridge
from reference_gateway.inbound.responses_stream import StreamBridge

TOOL = {"type": "function", "name": "get_weather", "description": "w",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip


def test_a_string_input_with_instructions_and_settings() -> None:
    chat = bridge.chat_request({"model": "m", "instructions": "Be brief.", "input": "Hi", "max_output_tokens": 99,
                                "temperature": 0.5, "stream": True, "safety_identifier": "u1"})  # fmt: skip
    assert chat["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert chat["max_completion_tokens"] == 99 and chat["temperature"] == 0.5 and chat["user"] == "u1"
    assert chat["stream"] is True and chat["stream_options"] == {"include_usage": True}


def test_items_tools_choice_and_format() -> None:
    body = {
        "model": "m",
        "tools": [TOOL],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "text": {
            "format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}, "strict": True}
        },
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "7C"},
        ],
    }
    chat = bridge.chat_request(body)
    assert chat["tools"] == [{"type": "function", "function": {"name": "get_weather", "description": "w",
                                                               "parameters": TOOL["parameters"]}}]  # fmt: skip
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert chat["response_format"]["json_schema"] == {
        "name": "w",
        "schema": {"type": "object"},
        "strict": True,
    }
    user, call, result = chat["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "Weather?"}]}
    assert call["tool_calls"][0]["id"] == "c1" and call["content"] is None
    assert result == {"role": "tool", "tool_call_id": "c1", "content": "7C"}


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (
            {
                "model": "m",
                "input": [{"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "x"}],
            },
            "input",
        ),
        ({"model": "m", "input": "hi", "tools": [{"type": "web_search_preview"}]}, "tools"),
        ({"model": "m", "input": "hi", "tool_choice": {"type": "allowed_tools"}}, "tool_choice"),
        ({"model": "m"}, "input"),
    ],
)
def test_what_the_chat_vocabulary_cannot_carry_is_refused(body: dict[str, Any], param: str) -> None:
    with pytest.raises(bridge.BridgeRefusal) as refused:
        bridge.chat_request(body)
    assert refused.value.param == param


def test_a_completion_becomes_a_response() -> None:
    completion = {"id": "chatcmpl-1", "model": "m", "created": 5, "choices": [{"index": 0, "finish_reason": "length",
                  "message": {"role": "assistant", "content": "Hi", "tool_calls": [{"id": "c1", "type": "function",
                  "function": {"name": "f", "arguments": "{}"}}]}}],
                  "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7,
                            "prompt_tokens_details": {"cached_tokens": 1}}}  # fmt: skip
    response = bridge.response(completion, {"model": "m", "metadata": {"k": "v"}}, "resp_1")
    assert (
        response["id"] == "resp_1" and response["object"] == "response" and response["metadata"] == {"k": "v"}
    )
    assert [item["type"] for item in response["output"]] == ["message", "function_call"]
    assert response["output"][0]["content"][0]["text"] == "Hi"
    assert response["output"][1]["call_id"] == "c1"
    assert response["status"] == "incomplete" and response["incomplete_details"] == {
        "reason": "max_output_tokens"
    }
    assert (
        response["usage"]["input_tokens_details"] == {"cached_tokens": 1, "cache_write_tokens": 0}
        and response["usage"]["total_tokens"] == 7
    )


def _stream(chunks: list[dict[str, Any]]) -> bytes:
    translator = StreamBridge({"model": "m"}, "resp_1")
    out = [piece for chunk in chunks for piece in translator.feed(chunk)] + translator.end()
    return b"".join(out)


def _judged(raw: bytes, expected: Any = None) -> list[str]:
    request = SentRequest("POST", "http://gw/v1/responses", {}, b"{}", {"stream": True})
    ex = Exchange("r", {"stream": True}, request, ReceivedResponse(200, {"content-type": "text/event-stream"}, raw),
                  surface="responses")  # fmt: skip
    return [v.message for v in check_stream_order(expected or {}, ex)]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "m",
        "created": 1,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_the_stream_bridge_speaks_the_grammar_text_then_interleaved_calls() -> None:
    raw = _stream([
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Let me"}), chunk({"content": " check."}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "a", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function", "function": {"name": "b", "arguments": "{"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}),
        chunk({}, "tool_calls"),
        {"id": "c", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}},
    ])  # fmt: skip
    assert _judged(raw) == []
    events = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    final = events[-1]
    assert final["type"] == "response.completed" and final["response"]["usage"]["total_tokens"] == 7
    assert [(i["type"], i.get("arguments")) for i in final["response"]["output"]] == [
        ("message", None), ("function_call", "{}"), ("function_call", "{}")]  # fmt: skip


def test_a_stream_error_becomes_an_error_event_and_failed() -> None:
    raw = _stream([chunk({"content": "Hel"}), {"error": {"message": "overloaded", "type": "server_error"}}])
    assert _judged(raw, {"error": True}) == []
    events = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    assert events[-1]["response"]["error"]["message"] == "overloaded"


def test_a_kept_conversation_continues_without_its_instructions() -> None:
    """State: the conversation kept is the input and the answer as chat messages; a continuation puts it before
    the new input, its own instructions first and the previous ones not carried."""
    first = {"model": "m", "instructions": "Be a pirate.", "input": "Remember TULIP."}
    completion = {"id": "c", "model": "m", "created": 1, "choices": [{"index": 0, "finish_reason": "tool_calls",
                  "message": {"role": "assistant", "content": "Noted.", "tool_calls": [{"id": "call_1",
                  "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}  # fmt: skip
    kept = [
        *bridge.input_messages(first),
        *bridge.assistant_turn(bridge.response(completion, first, "resp_1")),
    ]
    assert kept == [
        {"role": "user", "content": "Remember TULIP."},
        {"role": "assistant", "content": "Noted.",
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    ]  # fmt: skip
    nxt = bridge.chat_request({"model": "m", "instructions": "Be brief.", "input": [
        {"type": "function_call_output", "call_id": "call_1", "output": "ok"}]}, kept)  # fmt: skip
    assert [m["role"] for m in nxt["messages"]] == ["system", "user", "assistant", "tool"]
    assert nxt["messages"][0]["content"] == "Be brief."


def test_a_kept_responses_input_items_are_listed_newest_first_as_openai_lists_them() -> None:
    from reference_gateway.inbound.responses_state import listed_inputs

    record = {
        "response": {"id": "resp_0123456789abcdef0123"},
        "inputs": [
            {"role": "user", "content": "Remember TULIP."},
            {"role": "assistant", "content": "I will."},
            {"type": "function_call_output", "call_id": "call_1", "output": "7C"},
        ],
    }
    listed = listed_inputs(record, "desc", 20)
    assert listed["object"] == "list" and listed["has_more"] is False
    assert [i.get("role") or i["type"] for i in listed["data"]] == [
        "function_call_output",
        "assistant",
        "user",
    ]
    user = listed["data"][-1]
    assert user["type"] == "message" and user["content"] == [
        {"type": "input_text", "text": "Remember TULIP."}
    ]
    assert listed["data"][1]["content"] == [{"type": "output_text", "text": "I will."}]
    assert len({i["id"] for i in listed["data"]}) == 3 and listed["first_id"] == listed["data"][0]["id"]
    page = listed_inputs(record, "asc", 2)
    assert [i.get("role") for i in page["data"]] == ["user", "assistant"] and page["has_more"] is True
