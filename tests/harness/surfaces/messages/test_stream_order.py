"""The Messages event grammar (harness/surfaces/messages/stream_order.py): a stream as Anthropic sends it passes;
each way real gateways broke it (docs/real-gateway-bugs.md; specs/anthropic/messages-contract.md, Streaming) is
named by a violation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.surfaces.messages.reading import assemble_view
from harness.surfaces.messages.stream_order import check_stream_order
from harness.surfaces.reading import stream_view

START = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
         "model": "claude-sonnet-5-5", "content": [], "stop_reason": None, "usage": {"input_tokens": 27, "output_tokens": 1}}}  # fmt: skip
TEXT = [
    START,
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "ping"},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " there"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"city": "Os'}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 'lo"}'}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 12}},
    {"type": "message_stop"},
]  # fmt: skip


def sse(events: list[Any], *, named: bool = True) -> bytes:
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        name = event["type"] if isinstance(event, dict) else "x"
        out.append((f"event: {name}\n" if named else "") + f"data: {data}\n\n")
    return "".join(out).encode()


def exchange(raw: bytes) -> Exchange:
    request = SentRequest("POST", "http://gw/v1/messages", {}, b"{}", {"stream": True})
    response = ReceivedResponse(200, {"content-type": "text/event-stream"}, raw)
    return Exchange("r", {"stream": True}, request, response, surface="messages")


def messages_of(raw: bytes, expected: Any = None) -> list[str]:
    return [v.message for v in check_stream_order(expected or {}, exchange(raw))]


def test_the_documented_flow_passes_and_assembles_to_the_message() -> None:
    assert messages_of(sse(TEXT)) == []
    message = assemble_view(stream_view(sse(TEXT)))
    assert message["content"][0]["text"] == "Hello there"
    assert message["content"][1]["input"] == {"city": "Oslo"}
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 27, "output_tokens": 12}


def without(index: int) -> list[Any]:
    return TEXT[:index] + TEXT[index + 1 :]


def replaced(index: int, event: Any) -> list[Any]:
    return [*TEXT[:index], event, *TEXT[index + 1 :]]


BROKEN = {
    "data-only stream (no event: names)": (sse(TEXT, named=False), "the `event:` name is not the data's type"),
    "no message_start": (sse(without(0)), "before message_start"),
    "no message_stop (cut short)": (sse(without(len(TEXT) - 1)), "without message_stop"),
    "no message_delta": (sse(without(len(TEXT) - 2)), "message_stop without a message_delta"),
    "a block never stopped": (sse(without(5)), "still open"),
    "blocks at 1-based indexes": (sse([START, {**TEXT[1], "index": 1}, {**TEXT[3], "index": 1}, {**TEXT[5], "index": 1}, *TEXT[11:]]), "start at index 0"),
    "a delta for a block never started": (sse(replaced(3, {**TEXT[3], "index": 7})), "never started"),
    "fragments that do not join to JSON": (sse(replaced(9, {**TEXT[9], "delta": {"type": "input_json_delta", "partial_json": "lo"}})), "do not join to JSON"),
    "a tool use with its input in the start": (sse(replaced(6, {**TEXT[6], "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}})), "starts with an empty input"),
    "a text delta inside a tool use": (sse(replaced(8, {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}})), "a text_delta inside a tool_use block"),
    "no stop_reason": (sse(replaced(11, {"type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 1}})), "no documented stop_reason"),
    "no output usage": (sse(replaced(11, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}})), "no output_tokens"),
    "an event after message_stop": (sse([*TEXT, TEXT[3]]), "after message_stop"),
    "a [DONE] after message_stop": (sse(TEXT) + b"data: [DONE]\n\n", "not a typed JSON object"),
    "two tool uses with one id": (sse([*TEXT[:11], {**TEXT[6], "index": 2}, {"type": "content_block_stop", "index": 2}, *TEXT[11:]]), "the id of an earlier one"),
    "message_start without an id": (sse([{"type": "message_start", "message": {**START["message"], "id": ""}}, *TEXT[1:]]), "has no id"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_broken_stream_is_named(case: str) -> None:
    raw, wanted = BROKEN[case]
    found = messages_of(raw)
    assert any(wanted in m for m in found), found


def test_a_thinking_block_without_its_signature_is_named() -> None:
    events = [
        START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Let me see."},
        },
        {"type": "content_block_stop", "index": 0},
        TEXT[11],
        TEXT[12],
    ]
    assert any("without its signature" in m for m in messages_of(sse(events)))
    signed = [
        *events[:3],
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQB"},
        },
        *events[3:],
    ]
    assert messages_of(sse(signed)) == []
    assert assemble_view(stream_view(sse(signed)))["content"][0]["signature"] == "EqQB"


def test_an_error_event_ends_the_stream_and_is_required_only_when_asked() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    cut = sse([*TEXT[:4], error])
    assert messages_of(cut, {"error": True}) == []
    assert messages_of(sse(TEXT), {"error": True}) == [
        "the stream ends without the error event the rule expects"
    ]
    assert any(
        "after the stream's error event" in m
        for m in messages_of(sse([*TEXT[:4], error, TEXT[4]]), {"error": True})
    )


def test_unknown_event_types_and_pings_are_tolerated() -> None:
    assert messages_of(sse([*TEXT[:2], {"type": "future_event", "x": 1}, *TEXT[2:]])) == []
