"""Profile `lyrouter`, pure parts, table-driven: canonical JSON, the OpenAI-compatible pass-through, the
Anthropic conversion, answers and streams, routing and key reading."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from reference_gateway.adapters import adapter_for
from reference_gateway.auth import KeyRing
from reference_gateway.errors import GatewayError
from reference_gateway.jsonorder import canonical_dumps, canonical_json_text, number
from reference_gateway.policy.channels import requested_model, resolve
from reference_gateway.policy.models import Channel, ModelInfo, load_catalog
from reference_gateway.policy.profiles import EZAT, LYROUTER
from reference_gateway.sse import ServerSentEvent
from reference_gateway.translate.anthropic.request import RequestOptions, chat_to_anthropic
from reference_gateway.translate.anthropic.response import message_to_chat
from reference_gateway.translate.anthropic.stream import StreamTranslator
from reference_gateway.translate.chunks import DONE, StreamContext
from reference_gateway.translate.openai.passthrough import PassthroughStream, chat_to_openai
from tests.reference_gateway.conftest import message, text_events

CATALOG = load_catalog(shipped=LYROUTER.catalog)
SONNET = CATALOG.models["claude-sonnet-5-5"]
GPT = CATALOG.models["gpt-5.5"]
QWEN = CATALOG.models["qwen3-max"]
DEEPSEEK = CATALOG.models["deepseek-chat"]
KIMI = CATALOG.models["kimi-k2"]
USER = [{"role": "user", "content": "hi"}]
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}

# ------------------------------------------------------------------------------------------- canonical JSON

NUMBERS = [
    (42, "42"),
    (-7, "-7"),
    (0.7, "0.7"),
    (0.1 + 0.2, "0.3"),
    (99999999999999, "99999999999999"),
    (100000000000000, "1e+14"),
    (1234567890123456789, "1.2345678901235e+18"),
    (3.14159265358979323846, "3.1415926535898"),
    (1.0, "1"),
    (1e-7, "1e-07"),
]


@pytest.mark.parametrize(("value", "text"), NUMBERS, ids=[t for _, t in NUMBERS])
def test_numbers_keep_14_significant_digits(value: float, text: str) -> None:
    assert number(value) == text


def test_canonical_dumps_sorts_every_object_and_keeps_arrays() -> None:
    value = {"b": [{"z": 1, "a": True}, None], "a": {"y": "é", "x": False}}
    assert canonical_dumps(value) == '{"a":{"x":false,"y":"é"},"b":[{"a":true,"z":1},null]}'
    assert canonical_dumps(json.loads(canonical_dumps(value))) == canonical_dumps(value)


@pytest.mark.parametrize(
    ("text", "want"),
    [('{"b": 1, "a": {"d": 2, "c": 3}}', '{"a":{"c":3,"d":2},"b":1}'), ("not json {", "not json {")],
    ids=["json", "not-json"],
)
def test_canonical_json_text(text: str, want: str) -> None:
    assert canonical_json_text(text) == want


# ------------------------------------------------------------------------------------------- pass-through


def passthrough(body: dict[str, Any], model: ModelInfo = GPT) -> dict[str, Any]:
    full = {"model": model.id, "messages": USER, **body}
    frozen = copy.deepcopy(full)
    out = chat_to_openai(full, profile=LYROUTER, model=model, channel=model.channels[0]).body
    assert full == frozen, "the translator mutated its input"
    return out


REASONING = {"reasoning_effort": "high", "enable_thinking": True, "thinking_budget": 512}
REASONING_TABLE = [
    (GPT, {"reasoning_effort"}),
    (QWEN, {"enable_thinking", "thinking_budget"}),
    (DEEPSEEK, set()),
    (KIMI, {"reasoning_effort", "enable_thinking", "thinking_budget"}),
]


@pytest.mark.parametrize(("model", "kept"), REASONING_TABLE, ids=[m.id for m, _ in REASONING_TABLE])
def test_reasoning_parameters_per_provider(model: ModelInfo, kept: set[str]) -> None:
    out = passthrough(REASONING, model)
    assert {k for k in REASONING if k in out} == kept
    assert all(out[k] == REASONING[k] for k in kept)


FORCED = [
    ({"tool_choice": "required"}, False),
    ({"tool_choice": {"type": "function", "function": {"name": "f"}}}, False),
    ({"tool_choice": "auto"}, None),
    ({"tool_choice": "required", "enable_thinking": True}, True),
    ({"tool_choice": "required", "thinking_budget": 100}, None),
]


@pytest.mark.parametrize(
    ("body", "thinking"), FORCED, ids=["required", "named", "auto", "explicit", "budget"]
)
def test_dashscope_forced_tool_turns_thinking_off(body: dict[str, Any], thinking: bool | None) -> None:
    out = passthrough({"tools": [TOOL], **body}, QWEN)
    assert out.get("enable_thinking") is thinking
    assert "enable_thinking" not in passthrough({"tools": [TOOL], **body}, KIMI) or "enable_thinking" in body


def test_passthrough_forwards_unknown_fields_and_rewrites_only_its_own() -> None:
    body = {"seed": 7, "n": 2, "logit_bias": {"50256": -100}, "x_custom": {"b": 1}, "stream": True}
    out = passthrough({**body, "stream_options": {"include_usage": False, "extra": 1}})
    assert {k: out[k] for k in body} == body
    assert out["model"] == "gpt-5.5"
    assert out["stream_options"] == {"include_usage": True}


def test_passthrough_strips_history_extensions_and_markers() -> None:
    messages = [
        {
            "role": "system",
            "content": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        },
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "a",
            "reasoning_content": "r",
            "reasoning_blocks": [{"type": "thinking", "thinking": "r", "signature": "x"}],
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"b": 2, "a": 1}'}}
            ],
        },
    ]
    out = passthrough({"messages": messages, "tools": [{**TOOL, "cache_control": {"type": "ephemeral"}}]})
    assert "cache_control" not in json.dumps(out)
    assert "reasoning_content" not in out["messages"][2] and "reasoning_blocks" not in out["messages"][2]
    assert out["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"a":1,"b":2}'
    assert out["messages"][0]["content"] == [{"type": "text", "text": "s"}]


def test_passthrough_text_only_model_refuses_images() -> None:
    with pytest.raises(GatewayError) as caught:
        passthrough({"messages": [{"role": "user", "content": [IMAGE]}]}, DEEPSEEK)
    assert (caught.value.status, caught.value.code) == (400, "unsupported_model_input")
    assert caught.value.message == "This model accepts text input only"
    assert passthrough({"messages": [{"role": "user", "content": [IMAGE]}]}, GPT)["messages"][0]["content"]


def sse_events(*data: str) -> list[ServerSentEvent]:
    return [ServerSentEvent(None, d) for d in data]


@pytest.mark.parametrize(
    ("events", "tail"),
    [
        (sse_events('{"id":"x","choices":[]}', "[DONE]"), [b"data: [DONE]\n\n"]),
        (sse_events('{"id":"x","choices":[]}'), ["stream_interrupted"]),
        (sse_events('{"error":{"message":"boom"}}'), [b'data: {"error":{"message":"boom"}}\n\n']),
    ],
    ids=["done", "cut-short", "upstream-error"],
)
def test_passthrough_stream(events: list[ServerSentEvent], tail: list[Any]) -> None:
    stream = PassthroughStream(LYROUTER)
    out = [item for e in events for item in stream.feed(e)]
    if not stream.finished:
        out += stream.end_of_stream()
    assert out[0] == b"data: " + events[0].data.encode() + b"\n\n"
    if tail == ["stream_interrupted"]:
        assert json.loads(out[-1][6:])["error"]["code"] == "stream_interrupted"
        assert b"[DONE]" not in b"".join(out)
    else:
        assert out[-1] == tail[0]


# ------------------------------------------------------------------------------------------- Anthropic channel


def anthropic(body: dict[str, Any], model: ModelInfo = SONNET, **kw: Any) -> dict[str, Any]:
    full = {"model": model.id, "messages": USER, **body}
    frozen = copy.deepcopy(full)
    out = chat_to_anthropic(full, profile=LYROUTER, model=model, **kw)
    assert full == frozen, "the translator mutated its input"
    return dict(out.body)


REMOVED = [
    {"response_format": {"type": "json_object"}},
    {"seed": 1},
    {"n": 3},
    {"logprobs": True, "top_logprobs": 2},
    {"frequency_penalty": 1, "presence_penalty": 1},
    {"logit_bias": {"1": 1}},
    {"parallel_tool_calls": False, "tools": [TOOL]},
    {"reasoning_effort": "high"},
    {"functions": [{"name": "f"}], "function_call": "auto", "user": "u"},
]


@pytest.mark.parametrize("body", REMOVED, ids=[next(iter(b)) for b in REMOVED])
def test_removed_for_anthropic_silently(body: dict[str, Any]) -> None:
    out = anthropic(body)
    plain = anthropic({"tools": [TOOL]} if "tools" in body else {})
    assert out == plain


LIMITS = [
    ({}, 4096),
    ({"max_completion_tokens": 100}, 100),
    ({"max_tokens": 50, "max_completion_tokens": 100}, 50),
    ({"max_tokens": 100000}, 100000),
]


@pytest.mark.parametrize(("body", "limit"), LIMITS, ids=["default", "mct", "both", "above-model"])
def test_max_tokens(body: dict[str, Any], limit: int) -> None:
    assert anthropic(body)["max_tokens"] == limit


THINKING = [
    ({"enable_thinking": True}, {"type": "adaptive"}),
    ({"enable_thinking": False}, None),
    ({"thinking_budget": 2048}, {"type": "enabled", "budget_tokens": 2048}),
    ({"enable_thinking": True, "thinking_budget": 2048}, {"type": "enabled", "budget_tokens": 2048}),
    ({"enable_thinking": False, "thinking_budget": 2048}, None),
    ({"thinking_budget": 0}, None),
    ({}, None),
]


@pytest.mark.parametrize(("body", "thinking"), THINKING, ids=[json.dumps(b) for b, _ in THINKING])
def test_thinking_table(body: dict[str, Any], thinking: dict[str, Any] | None) -> None:
    assert anthropic(body).get("thinking") == thinking


def test_sampling_stop_metadata_and_system() -> None:
    out = anthropic(
        {
            "temperature": 1.7,
            "top_p": 1,
            "stop": "END",
            "metadata": {"user_id": "u1", "team": "t"},
            "messages": [
                {"role": "system", "content": "one"},
                {"role": "developer", "content": "two"},
                {"role": "user", "content": "hi"},
            ],
        }
    )
    assert (out["temperature"], out["top_p"], out["stop_sequences"]) == (1.7, 1, ["END"])
    assert out["metadata"] == {"user_id": "u1"}
    assert [b["text"] for b in out["system"]] == ["one\n\ntwo"]
    assert "cache_control" not in json.dumps(out)  # no automatic breakpoints


def test_only_text_and_images_converted_and_markers_only_on_text() -> None:
    content = [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {**IMAGE, "cache_control": {"type": "ephemeral"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
        {"type": "input_audio", "input_audio": {"data": "", "format": "wav"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0="}},
        {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}},
    ]
    blocks = anthropic({"messages": [{"role": "user", "content": content}]})["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "image", "image"]
    assert "cache_control" in blocks[0] and "cache_control" not in blocks[1]
    assert blocks[2]["source"] == {"type": "url", "url": "https://example.com/cat.jpg"}


@pytest.mark.parametrize(
    ("ttl", "client", "header"),
    [
        ("1h", "other-beta", "extended-cache-ttl-2025-04-11"),
        ("5m", "other-beta", "other-beta"),
        (None, None, None),
    ],
    ids=["1h-overrides", "5m-keeps-client", "none"],
)
def test_one_hour_cache_beta_header(ttl: str | None, client: str | None, header: str | None) -> None:
    marker = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    options = RequestOptions(client_headers={"anthropic-beta": client} if client else {})
    translated = chat_to_anthropic(
        {"model": SONNET.id, "tools": [{**TOOL, "cache_control": marker}], "messages": USER},
        profile=LYROUTER,
        model=SONNET,
        options=options,
    )
    assert translated.headers.get("anthropic-beta") == header


def test_reasoning_blocks_handed_back_first() -> None:
    blocks = [
        {"type": "thinking", "thinking": "t", "signature": "s"},
        {"type": "redacted_thinking", "data": "d"},
    ]
    history = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "t",
            "reasoning_blocks": blocks,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    turn = anthropic({"messages": history, "tools": [TOOL]})["messages"][1]
    assert turn["content"][:2] == blocks and turn["content"][2]["type"] == "tool_use"


def test_text_only_anthropic_model_refuses_images() -> None:
    text_only = ModelInfo(
        "t", "t", 0, False, False, False, (), True, 1000, (Channel("anthropic", "anthropic", "t"),)
    )
    with pytest.raises(GatewayError) as caught:
        anthropic({"messages": [{"role": "user", "content": [IMAGE]}]}, text_only)
    assert caught.value.code == "unsupported_model_input"


# ------------------------------------------------------------------------------------------- answers

IDS = {"completion_id": "chatcmpl-gw", "created": 1793318400, "model": "claude-sonnet-5-5"}


def test_answer_keeps_upstream_id_model_usage_and_reasoning() -> None:
    msg = {
        **message("Done.", thinking="let me think"),
        "id": "msg_up",
        "model": "claude-sonnet-5-5-20261015",
        "usage": {"input_tokens": 226, "output_tokens": 32, "cache_read_input_tokens": 1024},
    }
    out = message_to_chat(msg, profile=LYROUTER, **IDS)
    assert (out["id"], out["model"]) == ("msg_up", "claude-sonnet-5-5-20261015")
    chat = out["choices"][0]["message"]
    assert chat["reasoning_content"] == "let me think"
    assert chat["reasoning_blocks"] == [{"type": "thinking", "thinking": "let me think", "signature": "sig"}]
    assert out["usage"] == {
        "prompt_tokens": 226,
        "completion_tokens": 32,
        "total_tokens": 258,
        "cache_read_input_tokens": 1024,
        "cache_creation_input_tokens": 0,
    }
    assert "reasoning_content" not in message_to_chat(msg, profile=EZAT, **IDS)["choices"][0]["message"]


def test_stream_upstream_ids_reasoning_deltas_three_field_usage() -> None:
    events = text_events("Hi!", usage={"input_tokens": 5, "cache_read_input_tokens": 9, "output_tokens": 1})
    thinking = {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "hm"},
    }
    events = [events[0], thinking, *events[1:]]
    translator = StreamTranslator(StreamContext(include_usage=True, profile=LYROUTER, **IDS))
    items = [i for e in events for i in translator.feed(e)]
    chunks = [i for i in items if isinstance(i, dict)]
    assert {c["id"] for c in chunks} == {"msg_1"}
    assert chunks[1]["choices"][0]["delta"] == {"reasoning_content": "hm"}
    assert chunks[-1]["choices"] == [] and set(chunks[-1]["usage"]) == {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
    }
    assert items[-1] == DONE


def test_stream_failure_is_stream_interrupted_without_done() -> None:
    translator = StreamTranslator(StreamContext(include_usage=True, profile=LYROUTER, **IDS))
    translator.feed(text_events()[0])
    items = translator.feed({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert len(items) == 1 and items[0]["error"]["code"] == "stream_interrupted"  # type: ignore[index]


# ------------------------------------------------------------------------------------------- routing and keys

ROUTES = [
    ("gemini-3-pro", 403, "model_not_available"),
    ("gpt-image-2", 400, "unsupported_model_api"),
    ("@vmodel/does-not-exist", 503, "no_route_candidate"),
]


@pytest.mark.parametrize(("name", "status", "code"), ROUTES, ids=[n for n, _, _ in ROUTES])
def test_resolve_refusals(name: str, status: int, code: str) -> None:
    with pytest.raises(GatewayError) as caught:
        resolve(CATALOG, name, LYROUTER)
    assert (caught.value.status, caught.value.code) == (status, code)


def test_fallback_model_has_two_anthropic_channels_and_catalog_default() -> None:
    channels = resolve(CATALOG, "claude-haiku-4-5", LYROUTER).channels
    assert [c.protocol for c in channels] == ["anthropic", "anthropic"]
    assert CATALOG.default_model == "claude-sonnet-5-5"
    qwen, sonnet = QWEN.channels[0], SONNET.channels[0]
    assert adapter_for(qwen).path(qwen, stream=False) == "/compatible-mode/v1/chat/completions"
    assert adapter_for(sonnet).path(sonnet, stream=True) == "/v1/messages"


@pytest.mark.parametrize("body", [{}, {"model": ""}, {"model": None}], ids=["omitted", "empty", "null"])
def test_requested_model_default(body: dict[str, Any]) -> None:
    assert requested_model(body, "claude-sonnet-5-5", LYROUTER) == "claude-sonnet-5-5"
    with pytest.raises(GatewayError) as caught:
        requested_model(body, None, LYROUTER)
    assert (caught.value.code, caught.value.message) == (
        "missing_model",
        "you must provide a model parameter",
    )


KEYS = [
    ({"authorization": "Bearer k"}, True, True),
    ({"authorization": "bearer k"}, False, True),
    ({"x-api-key": "k"}, True, True),
    ({"authorization": "Bearer k", "x-api-key": "bad"}, True, True),
    ({"authorization": "Bearer bad", "x-api-key": "k"}, False, False),
    ({"authorization": "bearer k", "x-api-key": "k"}, False, True),
]


@pytest.mark.parametrize(("headers", "lyrouter_ok", "ezat_ok"), KEYS, ids=[json.dumps(h) for h, _, _ in KEYS])
def test_key_reading(headers: dict[str, str], lyrouter_ok: bool, ezat_ok: bool) -> None:
    ring = KeyRing.of(["k"])
    for profile, ok in ((LYROUTER, lyrouter_ok), (EZAT, ezat_ok)):
        failure = ring.check(
            headers,
            bearer_case_sensitive=profile.requests.bearer_case_sensitive,
            authorization_only=profile.requests.authorization_only,
        )
        assert (failure is None) is ok, profile.name
