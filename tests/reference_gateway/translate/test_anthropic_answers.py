"""The pure answer translators: non-streaming messages, the stream state machine, the SSE decoder, and the
upstream error mapping (table-driven)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reference_gateway.errors import GatewayError, from_upstream, from_upstream_body
from reference_gateway.policy.profiles import EZAT
from reference_gateway.sse import SSEDecoder
from reference_gateway.translate.anthropic.response import message_to_chat
from reference_gateway.translate.anthropic.stream import StreamTranslator
from reference_gateway.translate.chunks import DONE, StreamContext, encode
from reference_gateway.translate.completion import UpstreamUsage, finish_reason, usage_to_openai
from tests.reference_gateway.conftest import message, sse, text_events

IDS = {"completion_id": "chatcmpl-r1", "created": 1793318400, "model": "anthropic/claude-sonnet-5-5"}


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "stop"),
        ("compaction", "stop"),
        (None, "stop"),
    ],
)
def test_finish_reason(stop_reason: Any, expected: str) -> None:
    assert finish_reason(stop_reason, EZAT) == expected


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (
            {"input_tokens": 10, "output_tokens": 5},
            (10, 5, 15, 0, 0, 0),
        ),
        (
            {
                "input_tokens": 10,
                "output_tokens": 50,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 200,
                "output_tokens_details": {"thinking_tokens": 30},
            },
            (1210, 50, 1260, 1000, 200, 30),
        ),
        ({"input_tokens": 3, "output_tokens": 1, "cache_read_input_tokens": None}, (3, 1, 4, 0, 0, 0)),
    ],
    ids=["plain", "cache-and-thinking", "nulls"],
)
def test_usage_math(wire: dict[str, Any], expected: tuple[int, ...]) -> None:
    usage = usage_to_openai(UpstreamUsage().updated(wire), EZAT)
    got = (
        usage["prompt_tokens"],
        usage["completion_tokens"],
        usage["total_tokens"],
        usage["prompt_tokens_details"]["cached_tokens"],
        usage["prompt_tokens_details"]["cache_write_tokens"],
        usage["completion_tokens_details"]["reasoning_tokens"],
    )
    assert got == expected


def test_message_to_chat_text_tools_and_hidden_thinking() -> None:
    msg = message(
        "I'll check.",
        thinking="hidden",
        tool_uses=[{"id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
        stop_reason="tool_use",
    )
    out = message_to_chat(msg, profile=EZAT, **IDS)
    assert out["id"] == "chatcmpl-r1" and out["object"] == "chat.completion" and out["model"] == IDS["model"]
    choice = out["choices"][0]
    assert choice["message"]["content"] == "I'll check."
    assert choice["message"]["refusal"] is None
    assert choice["message"]["tool_calls"] == [
        {
            "id": "toolu_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
    ]
    assert choice["finish_reason"] == "tool_calls"
    assert "hidden" not in json.dumps(out)


def test_message_to_chat_tool_only_has_null_content() -> None:
    msg = message(None, tool_uses=[{"id": "t", "name": "f", "input": {}}], stop_reason="tool_use")
    out = message_to_chat(msg, profile=EZAT, **IDS)
    assert out["choices"][0]["message"]["content"] is None
    assert out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == "{}"


# ------------------------------------------------------------------------------------------------- stream


def run(events: list[dict[str, Any]], include_usage: bool = True, end: bool = True) -> list[Any]:
    translator = StreamTranslator(StreamContext(include_usage=include_usage, profile=EZAT, **IDS))
    out: list[Any] = []
    for event in events:
        out.extend(translator.feed(event))
    if end:
        out.extend(translator.end_of_stream())
    return out


def deltas(items: list[Any]) -> list[Any]:
    return [i["choices"][0]["delta"] for i in items if isinstance(i, dict) and i.get("choices")]


def test_text_stream_golden() -> None:
    items = run(
        text_events(
            "Hello there!", usage={"input_tokens": 11, "cache_read_input_tokens": 4, "output_tokens": 1}
        )
    )
    assert deltas(items) == [
        {"role": "assistant", "content": ""},
        {"content": "Hell"},
        {"content": "o th"},
        {"content": "ere!"},
        {},
    ]
    finish = items[-3]
    assert finish["choices"][0]["finish_reason"] == "stop" and finish["usage"] is None
    assert items[-2]["choices"] == [] and items[-2]["usage"]["prompt_tokens"] == 15
    assert items[-2]["usage"]["completion_tokens"] == 6
    assert items[-1] == DONE
    chunks = [i for i in items if isinstance(i, dict)]
    assert {(c["id"], c["created"], c["model"], c["object"]) for c in chunks} == {
        ("chatcmpl-r1", 1793318400, IDS["model"], "chat.completion.chunk")
    }
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-2])


def test_without_include_usage_no_usage_anywhere() -> None:
    items = run(text_events())
    items = run(text_events(), include_usage=False)
    assert all("usage" not in i for i in items if isinstance(i, dict))
    assert items[-1] == DONE and items[-2]["choices"][0]["finish_reason"] == "stop"


def tool_stream() -> list[dict[str, Any]]:
    start, text_start, *rest = text_events("Let me look.")
    body = rest[:-3]  # through the text block's content_block_stop
    return [
        start,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "secret"},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_stop", "index": 0},
        {**text_start, "index": 1},
        *({**e, "index": 1} for e in body if "index" in e),
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Pa'},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": 'ris"}'},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {"type": "tool_use", "id": "toolu_b", "name": "now", "input": {}},
        },
        {"type": "content_block_stop", "index": 3},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 40, "output_tokens_details": {"thinking_tokens": 12}},
        },
        {"type": "message_stop"},
    ]


def test_tool_stream_indexes_fragments_and_hidden_thinking() -> None:
    items = run(tool_stream())
    calls = [t for d in deltas(items) for t in d.get("tool_calls", [])]
    assert calls == [
        {
            "index": 0,
            "id": "toolu_a",
            "type": "function",
            "function": {"name": "get_weather", "arguments": ""},
        },
        {"index": 0, "function": {"arguments": '{"city": "Pa'}},
        {"index": 0, "function": {"arguments": 'ris"}'}},
        {"index": 1, "id": "toolu_b", "type": "function", "function": {"name": "now", "arguments": ""}},
        {"index": 1, "function": {"arguments": "{}"}},
    ]
    assert "secret" not in json.dumps(items)
    assert items[-3]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    assert items[-2]["usage"]["completion_tokens_details"]["reasoning_tokens"] == 12


@pytest.mark.parametrize(
    ("cut", "extra", "code"),
    [
        (
            4,
            [{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}],
            "overloaded",
        ),
        (4, [{"type": "error", "error": {"type": "api_error", "message": "x"}}], None),
        (-1, [], None),
        (0, [], None),
    ],
    ids=["overloaded-event", "api-error-event", "no-message-stop", "empty-stream"],
)
def test_failures_end_with_error_then_done_and_no_usage(
    cut: int, extra: list[dict[str, Any]], code: str | None
) -> None:
    items = run(text_events("Hello there")[:cut] + extra)
    assert items[-1] == DONE
    error = items[-2]["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "server_error"
    assert error["code"] == code
    assert not any(isinstance(i, dict) and i.get("choices") == [] for i in items)
    assert not any(
        isinstance(i, dict) and i.get("choices") and i["choices"][0]["finish_reason"] for i in items
    )


def test_nothing_after_the_end() -> None:
    translator = StreamTranslator(StreamContext(include_usage=False, profile=EZAT, **IDS))
    for event in text_events():
        translator.feed(event)
    assert translator.finished
    assert translator.feed({"type": "message_stop"}) == []
    assert translator.end_of_stream() == []


def test_sse_decoder_any_chunking() -> None:
    raw = b"".join(sse(e) for e in text_events("abcdefgh")).replace(b"\n", b"\r\n", 3) + b": comment\n\n"
    expected = [e["type"] for e in text_events("abcdefgh")]
    for size in (1, 2, 7, 64, len(raw)):
        decoder = SSEDecoder()
        got = [ev for i in range(0, len(raw), size) for ev in decoder.feed(raw[i : i + size])]
        assert [ev.event for ev in got] == expected
        assert [json.loads(ev.data)["type"] for ev in got] == expected


def test_encode() -> None:
    assert encode(DONE) == b"data: [DONE]\n\n"
    assert encode({"error": {"message": "é", "type": "t", "param": None, "code": None}}) == (
        'data: {"error":{"message":"é","type":"t","param":null,"code":null}}\n\n'.encode()
    )


# ------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "upstream_type", "expected"),
    [
        (400, "invalid_request_error", (400, "invalid_request_error", None)),
        (401, "authentication_error", (500, "server_error", None)),
        (402, "billing_error", (402, "insufficient_quota", "insufficient_quota")),
        (403, "permission_error", (403, "permission_error", None)),
        (404, "not_found_error", (404, "invalid_request_error", "model_not_found")),
        (413, "request_too_large", (413, "invalid_request_error", "request_too_large")),
        (429, "rate_limit_error", (429, "rate_limit_error", "rate_limit_exceeded")),
        (500, "api_error", (500, "server_error", None)),
        (503, "api_error", (503, "server_error", "overloaded")),
        (529, "overloaded_error", (503, "server_error", "overloaded")),
        (504, "timeout_error", (504, "server_error", "timeout")),
        (418, None, (400, "invalid_request_error", None)),
        (None, "overloaded_error", (503, "server_error", "overloaded")),
        (None, "rate_limit_error", (429, "rate_limit_error", "rate_limit_exceeded")),
        (None, "something_new", (500, "server_error", None)),
    ],
)
def test_upstream_error_mapping(
    status: int | None, upstream_type: str | None, expected: tuple[Any, ...]
) -> None:
    error = from_upstream(status, {"type": upstream_type, "message": "upstream says"})
    assert (error.status, error.type, error.code) == expected
    envelope = error.to_envelope()
    assert set(envelope["error"]) == {"message", "type", "param", "code"}


def test_upstream_400_keeps_message_and_404_names_the_model() -> None:
    assert (
        from_upstream(400, {"type": "invalid_request_error", "message": "max_tokens: too big"}).message
        == "max_tokens: too big"
    )
    error = from_upstream(404, {"type": "not_found_error", "message": "model: x"}, model="anthropic/x")
    assert (error.param, error.message) == (
        "model",
        "The model `anthropic/x` does not exist or you do not have access to it.",
    )


@pytest.mark.parametrize("status", [429, 503, 529])
def test_retry_after_is_passed_on(status: int) -> None:
    error = from_upstream_body(
        status, b'{"type":"error","error":{"type":"x","message":"m"}}', headers={"retry-after": "12"}
    )
    assert error.headers == {"retry-after": "12"}


def test_non_json_error_body() -> None:
    error = from_upstream_body(502, b"<html>", headers={})
    assert isinstance(error, GatewayError) and (error.status, error.type) == (500, "server_error")


@pytest.mark.parametrize(
    "error",
    [
        {"type": "invalid_request_error", "message": "prompt is too long: 210431 tokens > 200000 maximum"},
        {
            "message": "The input token count (1100312) exceeds the maximum number of tokens allowed (1048576)."
        },
        {
            "message": "This model's maximum context length is 400000 tokens.",
            "code": "context_length_exceeded",
        },
    ],
)
def test_a_context_window_refusal_is_400_context_length_exceeded(error: dict[str, str]) -> None:
    """Each family's words for an over-long prompt become OpenAI's code, the one clients trim on."""
    from reference_gateway.errors import from_upstream

    mapped = from_upstream(400, error)
    assert (mapped.status, mapped.code, mapped.type) == (
        400,
        "context_length_exceeded",
        "invalid_request_error",
    )
    other = from_upstream(400, {"type": "invalid_request_error", "message": "max_tokens: 200000 > 64000"})
    assert other.code is None
