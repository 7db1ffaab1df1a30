"""Messages ⇄ Chat Completions (reference_gateway/inbound/bridge.py): a Messages request as a chat body, a
completion as a Message, a chunk stream as Messages events that the harness's own grammar check accepts."""

from __future__ import annotations

import json

from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.surfaces.messages.reading import assemble_view
from harness.surfaces.messages.stream_order import check_stream_order
from harness.surfaces.reading import stream_view
from reference_gateway.inbound import bridge

TOOLS = [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object"}}]


def test_a_messages_request_becomes_the_chat_body_the_flows_speak() -> None:
    body = {
        "model": "gpt-5.5", "max_tokens": 77, "system": [{"type": "text", "text": "Be terse."}],
        "stop_sequences": ["END"], "stream": True, "metadata": {"user_id": "u1"}, "tools": TOOLS,
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                              {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18 C"},
                                         {"type": "text", "text": "Thanks."}]},
        ],
    }  # fmt: skip
    chat = bridge.chat_request(body)
    assert chat["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "18 C"},
        {"role": "user", "content": [{"type": "text", "text": "Thanks."}]},
    ]  # fmt: skip
    assert (
        chat["max_completion_tokens"] == 77
        and "max_tokens" not in chat
        and chat["stop"] == ["END"]
        and chat["user"] == "u1"
    )
    assert chat["stream_options"] == {"include_usage": True}
    assert chat["tool_choice"] == "required" and chat["parallel_tool_calls"] is False
    assert chat["tools"][0]["function"]["parameters"] == {"type": "object"}


def test_a_completion_becomes_a_message_with_input_tokens_outside_the_cache() -> None:
    completion = {
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Let me check.",
                     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}}],
        "usage": {"prompt_tokens": 1250, "completion_tokens": 32, "prompt_tokens_details": {"cached_tokens": 1024}},
    }  # fmt: skip
    message = bridge.message(completion, "gpt-5.5")
    assert message["content"] == [{"type": "text", "text": "Let me check."},
                                  {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}}]  # fmt: skip
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["input_tokens"] == 226 and message["usage"]["cache_read_input_tokens"] == 1024


def test_a_chunk_stream_becomes_events_the_grammar_accepts() -> None:
    chunks = [
        {"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
        {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": '{"a"'}}]}}]},
        {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}]},
        {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"id": "c1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    ]  # fmt: skip
    translator = bridge.StreamBridge("gpt-5.5")
    raw = b"".join(b for c in chunks for b in translator.feed(c)) + b"".join(translator.end())
    exchange = Exchange("r", {"stream": True}, SentRequest("POST", "http://gw/v1/messages", {}, b"{}"),
                        ReceivedResponse(200, {"content-type": "text/event-stream"}, raw), surface="messages")  # fmt: skip
    assert [v.message for v in check_stream_order({}, exchange)] == []
    message = assemble_view(stream_view(raw))
    assert message["content"] == [
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}},
    ]
    assert message["stop_reason"] == "tool_use" and message["usage"]["output_tokens"] == 5


def test_an_error_chunk_ends_the_stream_with_an_error_event() -> None:
    translator = bridge.StreamBridge("m")
    raw = b"".join(translator.feed({"error": {"message": "boom", "type": "server_error"}}))
    last = raw.decode().strip().split("\n\n")[-1]
    assert last.startswith("event: error\n")
    assert json.loads(last.split("data: ", 1)[1]) == {
        "type": "error",
        "error": {"type": "api_error", "message": "boom"},
    }
    assert translator.end() == []
