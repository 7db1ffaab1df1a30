"""`translate.request.chat_to_anthropic`, table-driven: refusals, ignored fields, messages, tools, reasoning,
sampling, limits, output format and cache breakpoints."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_gateway.errors import GatewayError
from reference_gateway.policy.models import ModelInfo, load_catalog
from reference_gateway.policy.profiles import EZAT
from reference_gateway.translate.anthropic.request import (
    InlineImage,
    RemoteImage,
    RequestOptions,
    Translated,
    chat_to_anthropic,
    parse_data_url,
)

CATALOG = load_catalog()
SONNET = CATALOG.models["anthropic/claude-sonnet-5-5"]
HAIKU45 = CATALOG.models["anthropic/claude-haiku-4-5"]
HAIKU35 = CATALOG.models["anthropic/claude-haiku-3-5"]
OPUS = CATALOG.models["anthropic/claude-opus-4-8"]
USER = [{"role": "user", "content": "hi"}]
PNG = "iVBORw0KGgo="
TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}


def translate(body: dict[str, Any], model: ModelInfo = SONNET, **kw: Any) -> Translated:
    full = {"model": model.id, **body}
    frozen = copy.deepcopy(full)
    result = chat_to_anthropic(full, profile=EZAT, model=model, **kw)
    assert full == frozen, "the translator mutated its input"
    return result


def upstream(body: dict[str, Any], model: ModelInfo = SONNET, **kw: Any) -> dict[str, Any]:
    return dict(
        translate({"messages": USER, **body}, model, options=RequestOptions(cache_off=True), **kw).body
    )


REFUSALS = [
    ({"n": 2}, "n: only 1 choice per request is supported"),
    ({"logprobs": True}, "logprobs: log probabilities are not available"),
    ({"top_logprobs": 2}, "top_logprobs: log probabilities are not available"),
    ({"logit_bias": {"50256": -100}}, "logit_bias: is not supported"),
    ({"audio": {"voice": "alloy", "format": "wav"}}, "modalities: only text output is supported"),
    ({"modalities": ["text", "audio"]}, "modalities: only text output is supported"),
    ({"web_search_options": {}}, "web_search_options: is not supported"),
    ({"functions": [{"name": "f"}]}, "functions: the legacy functions API is not supported; use tools"),
    ({"function_call": "auto"}, "functions: the legacy functions API is not supported; use tools"),
    (
        {"response_format": {"type": "json_object"}},
        'response_format: type "json_object" is not supported; use "json_schema" with a schema '
        '(objects need "additionalProperties": false)',
    ),
    (
        {"tools": [{"type": "custom", "custom": {"name": "x"}}]},
        "tools[0].type: only function tools are supported",
    ),
    ({"tools": [TOOL, {"type": "web_search"}]}, "tools[1].type: only function tools are supported"),
    (
        {"reasoning_effort": "extreme"},
        "reasoning_effort: use one of none, minimal, low, medium, high, xhigh, max",
    ),
    (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}],
                }
            ]
        },
        "messages[0].content[0]: audio input is not supported",
    ),
    (
        {
            "messages": [
                {"role": "system", "content": "s"},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "a"},
                        {"type": "file", "file": {"file_id": "file-1"}},
                    ],
                },
            ]
        },
        "messages[1].content[1].file: send the PDF as file_data (a base64 data URL); file_id is not supported",
    ),
    (
        {"messages": [*USER, {"role": "function", "name": "f", "content": "x"}]},
        'messages[1].role: the legacy "function" role is not supported; use tools',
    ),
    ({"messages": [{"role": "system", "content": "s"}]}, "messages: must contain at least one user message"),
    ({"prompt_cache_key": "k" * 257}, "prompt_cache_key: must be at most 256 characters"),
]


@pytest.mark.parametrize(
    ("body", "message"), REFUSALS, ids=[m.split(":")[0] + f"-{i}" for i, (_, m) in enumerate(REFUSALS)]
)
def test_refused(body: dict[str, Any], message: str) -> None:
    with pytest.raises(GatewayError) as info:
        translate({"messages": USER, **body})
    error = info.value
    assert (error.status, error.type, error.code, error.message) == (
        400,
        "invalid_request_error",
        None,
        message,
    )
    assert error.param == message.split(":")[0]


@pytest.mark.parametrize(
    ("body", "model", "prefix"),
    [
        (
            {"reasoning_effort": "xhigh"},
            HAIKU45,
            "reasoning_effort: xhigh is not available for this model; use one of none, minimal, low, medium, high, max",
        ),
        (
            {"reasoning_effort": "high"},
            HAIKU35,
            "reasoning_effort: high is not available for this model; use one of none, minimal",
        ),
        ({"tools": [TOOL], "tool_choice": "required"}, OPUS, "tool_choice:"),
        (
            {"tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
            OPUS,
            "tool_choice:",
        ),
        (
            {"tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "nope"}}},
            SONNET,
            "tool_choice:",
        ),
        ({"max_tokens": 0}, SONNET, "max_tokens:"),
        ({"temperature": "hot"}, SONNET, "temperature:"),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AAAA"}}
                        ],
                    }
                ]
            },
            SONNET,
            "messages[0].content[0].image_url.url:",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}],
                    }
                ]
            },
            SONNET,
            "messages[0].content[0].image_url.url:",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "ftp://x/y.png"}}],
                    }
                ]
            },
            SONNET,
            "messages[0].content[0].image_url.url:",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "file", "file": {"file_data": "data:text/plain;base64,AAAA"}}],
                    }
                ]
            },
            SONNET,
            "messages[0].content[0].file.file_data:",
        ),
        ({"messages": [{"role": "wizard", "content": "x"}]}, SONNET, "messages[0].role:"),
        (
            {
                "messages": [
                    *USER,
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
                        ],
                    },
                ]
            },
            SONNET,
            "messages[1].tool_calls[0].function.arguments:",
        ),
        ({"messages": [{"role": "tool", "content": "x"}]}, SONNET, "messages[0].tool_call_id:"),
        ({"messages": []}, SONNET, "messages:"),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            SONNET,
            "response_format:",
        ),
    ],
    ids=[
        "xhigh-haiku45",
        "effort-haiku35",
        "required-opus",
        "named-opus",
        "unknown-function",
        "max-tokens-0",
        "temperature-type",
        "image-bmp",
        "image-bad-base64",
        "image-ftp",
        "file-not-pdf",
        "unknown-role",
        "bad-arguments",
        "tool-without-id",
        "no-messages",
        "schema-missing",
    ],
)
def test_invalid(body: dict[str, Any], model: ModelInfo, prefix: str) -> None:
    with pytest.raises(GatewayError) as info:
        translate({"messages": USER, **body}, model)
    assert info.value.status == 400
    assert info.value.message.startswith(prefix), info.value.message
    assert info.value.param == prefix.split(":")[0]


@pytest.mark.parametrize(
    "body",
    [
        {"n": 1},
        {"logprobs": False},
        {"logit_bias": {}},
        {"modalities": ["text"]},
        {"response_format": {"type": "text"}},
        {"n": None},
    ],
    ids=["n-1", "logprobs-false", "logit-bias-empty", "modalities-text", "format-text", "n-null"],
)
def test_accepted_defaults_are_not_forwarded(body: dict[str, Any]) -> None:
    sent = upstream(body)
    assert set(sent) == {"model", "max_tokens", "messages"}


def test_ignored_fields_never_reach_the_upstream() -> None:
    ignored = {
        "user": "u",
        "seed": 1,
        "presence_penalty": 0.5,
        "frequency_penalty": 0.5,
        "store": True,
        "metadata": {"a": "b"},
        "service_tier": "auto",
        "safety_identifier": "x",
        "verbosity": "low",
        "some_future_field": {"x": 1},
        "prompt_cache_key": "conversation-42",
    }
    sent = upstream(ignored)
    assert set(sent) == {"model", "max_tokens", "messages"}


@pytest.mark.parametrize(
    ("body", "model", "expected"),
    [
        ({}, SONNET, 32000),
        ({}, HAIKU35, 8192),
        ({"max_tokens": 100}, SONNET, 100),
        ({"max_completion_tokens": 50, "max_tokens": 100}, SONNET, 50),
        ({"max_completion_tokens": None, "max_tokens": 70}, SONNET, 70),
    ],
    ids=["default", "default-capped", "max_tokens", "max_completion_tokens-wins", "null-falls-back"],
)
def test_max_tokens(body: dict[str, Any], model: ModelInfo, expected: int) -> None:
    assert upstream(body, model)["max_tokens"] == expected


@pytest.mark.parametrize(
    ("effort", "model", "tool_choice", "expected_effort", "thinking"),
    [
        ("none", SONNET, None, "low", False),
        ("minimal", SONNET, None, "low", False),
        ("low", SONNET, None, "low", True),
        ("medium", SONNET, None, "medium", True),
        ("high", SONNET, None, "high", True),
        ("xhigh", SONNET, None, "xhigh", True),
        ("max", SONNET, None, "max", True),
        ("max", HAIKU45, None, "max", True),
        ("high", SONNET, "required", "high", False),
        ("high", SONNET, {"type": "function", "function": {"name": "get_weather"}}, "high", False),
        ("high", SONNET, "auto", "high", True),
        ("none", HAIKU35, None, None, False),
    ],
)
def test_reasoning_table(
    effort: str, model: ModelInfo, tool_choice: Any, expected_effort: str | None, thinking: bool
) -> None:
    body: dict[str, Any] = {"reasoning_effort": effort}
    if tool_choice is not None:
        body |= {"tools": [TOOL], "tool_choice": tool_choice}
    sent = upstream(body, model)
    assert sent.get("output_config", {}).get("effort") == expected_effort
    assert sent.get("thinking") == ({"type": "adaptive"} if thinking else None)


@pytest.mark.parametrize(
    ("body", "model", "expected"),
    [
        ({"temperature": 0, "top_p": 0.5}, SONNET, {}),
        ({"temperature": 0.7, "top_p": 0.5}, HAIKU45, {"temperature": 0.7, "top_p": 0.5}),
        ({"temperature": 1.8}, HAIKU45, {"temperature": 1}),
        ({"top_p": 1}, HAIKU45, {}),
        ({"temperature": 0.2, "reasoning_effort": "low"}, HAIKU45, {}),
        ({"temperature": 0.2, "reasoning_effort": "none"}, HAIKU45, {"temperature": 0.2}),
    ],
    ids=[
        "no-sampling-model",
        "forwarded",
        "capped",
        "top_p-1-dropped",
        "thinking-drops",
        "no-thinking-keeps",
    ],
)
def test_sampling(body: dict[str, Any], model: ModelInfo, expected: dict[str, Any]) -> None:
    sent = upstream(body, model)
    assert {k: sent[k] for k in ("temperature", "top_p") if k in sent} == expected


@pytest.mark.parametrize(
    ("tool_choice", "parallel", "expected"),
    [
        (None, None, None),
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            None,
            {"type": "tool", "name": "get_weather"},
        ),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("none", False, {"type": "none"}),
        (None, True, None),
    ],
)
def test_tool_choice(tool_choice: Any, parallel: Any, expected: Any) -> None:
    body: dict[str, Any] = {"tools": [TOOL]}
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    if parallel is not None:
        body["parallel_tool_calls"] = parallel
    assert upstream(body).get("tool_choice") == expected


def test_tool_choice_without_tools_is_ignored() -> None:
    sent = upstream({"tool_choice": "required", "parallel_tool_calls": False})
    assert "tool_choice" not in sent and "tools" not in sent


def test_tools_translate() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {"type": "object", "properties": {"a": {}}},
            "strict": True,
        },
    }
    assert upstream({"tools": [tool]})["tools"] == [
        {
            "name": "f",
            "input_schema": {"type": "object", "properties": {"a": {}}},
            "description": "d",
            "strict": True,
        }
    ]


@pytest.mark.parametrize(
    ("stop", "expected"), [("END", ["END"]), (["a", "\n"], ["a", "\n"]), (None, None), ([], None)]
)
def test_stop(stop: Any, expected: Any) -> None:
    assert upstream({"stop": stop}).get("stop_sequences") == expected


def test_messages_translate() -> None:
    messages = [
        {"role": "system", "content": "one"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "high"}},
            ],
        },
        {"role": "developer", "content": [{"type": "text", "text": "two"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}, {"type": "refusal", "refusal": "no"}],
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
                {"id": "c2", "type": "function", "function": {"name": "g", "arguments": ""}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "r2"}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "file",
                    "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
                }
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
    ]
    sent = upstream({"messages": messages})
    assert sent["system"] == [{"type": "text", "text": "one\n\ntwo"}]
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}},
                {"type": "tool_use", "id": "c2", "name": "g", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "r1"},
                {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "r2"}]},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c3", "name": "f", "input": {}}]},
    ]


def test_remote_images_are_reported_then_inlined() -> None:
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                ],
            }
        ]
    }
    first = translate(body)
    assert first.remote_images == (
        RemoteImage("messages[0].content[1].image_url.url", "https://example.com/a.png"),
    )
    second = translate(body, images={"messages[0].content[1].image_url.url": InlineImage("image/png", PNG)})
    assert second.remote_images == ()
    assert second.body["messages"][0]["content"][1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": PNG,
    }


BREAKPOINT = {"type": "ephemeral"}


def test_auto_cache_breakpoints_system_and_newest_message() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    sent = translate({"messages": messages, "tools": [TOOL]}).body
    assert sent["system"] == [{"type": "text", "text": "sys", "cache_control": BREAKPOINT}]
    assert "cache_control" not in sent["tools"][0]
    assert sent["messages"][0]["content"] == "first"
    assert sent["messages"][-1]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b", "cache_control": BREAKPOINT},
    ]


def test_auto_cache_on_tools_without_system_and_string_message() -> None:
    sent = translate({"messages": USER, "tools": [TOOL, TOOL | {"function": {"name": "h"}}]}).body
    assert "cache_control" not in sent["tools"][0]
    assert sent["tools"][1]["cache_control"] == BREAKPOINT
    assert sent["messages"][0]["content"] == [{"type": "text", "text": "hi", "cache_control": BREAKPOINT}]


@pytest.mark.parametrize(
    ("body", "model", "options"),
    [
        ({}, SONNET, RequestOptions(cache_off=True)),
        ({}, HAIKU35, RequestOptions()),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "text",
                                "text": "a",
                                "cache_control": {"type": "ephemeral", "ttl": "1h"},
                            },
                            {"type": "text", "text": "b"},
                        ],
                    }
                ]
            },
            SONNET,
            RequestOptions(),
        ),
        ({"tools": [TOOL | {"cache_control": {"type": "ephemeral"}}]}, SONNET, RequestOptions()),
        (
            {
                "messages": [
                    {
                        "role": "system",
                        "content": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
                    },
                    *USER,
                ]
            },
            SONNET,
            RequestOptions(),
        ),
    ],
    ids=["header-off", "model-without-caching", "client-part", "client-tool", "client-system"],
)
def test_no_automatic_breakpoints(body: dict[str, Any], model: ModelInfo, options: RequestOptions) -> None:
    full = {"messages": [{"role": "system", "content": "sys"}, *USER], **body}
    sent = translate(full, model, options=options).body
    marked = _cache_controls(sent)
    client_marks = _cache_controls(full)
    assert marked == client_marks


def _cache_controls(value: Any) -> list[Any]:
    if isinstance(value, dict):
        found = [value["cache_control"]] if "cache_control" in value else []
        return found + [c for v in value.values() for c in _cache_controls(v)]
    if isinstance(value, list):
        return [c for v in value for c in _cache_controls(v)]
    return []


def test_client_breakpoint_forwarded_unchanged() -> None:
    mark = {"type": "ephemeral", "ttl": "1h"}
    sent = translate(
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": mark}]}]}
    ).body
    assert sent["messages"][0]["content"][0]["cache_control"] == mark


def test_session_header_wins_over_prompt_cache_key() -> None:
    assert translate({"messages": USER, "prompt_cache_key": "k"}).session == "k"
    assert (
        translate(
            {"messages": USER, "prompt_cache_key": "k"}, options=RequestOptions(session_header="h")
        ).session
        == "h"
    )
    assert "metadata" not in translate({"messages": USER, "prompt_cache_key": "k"}).body


@pytest.mark.parametrize(
    ("body", "stream", "include_usage"),
    [
        ({}, False, False),
        ({"stream": True}, True, False),
        ({"stream": True, "stream_options": {"include_usage": True}}, True, True),
        ({"stream": False, "stream_options": {"include_usage": True}}, False, False),
    ],
)
def test_stream_flags(body: dict[str, Any], stream: bool, include_usage: bool) -> None:
    result = translate({"messages": USER, **body})
    assert (result.stream, result.include_usage) == (stream, include_usage)
    assert result.body.get("stream", False) is stream


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"data:image/png;base64,{PNG}", ("image/png", PNG)),
        ("data:IMAGE/JPEG;base64,/9j/", ("image/jpeg", "/9j/")),
        ("data:image/png,rawtext", None),
        ("data:image/png;base64,", None),
        ("data:image/png;base64,not base64!", None),
        ("https://x/y.png", None),
    ],
)
def test_parse_data_url(url: str, expected: Any) -> None:
    assert parse_data_url(url) == expected


def test_open_schema_objects_are_found_where_they_are() -> None:
    """EZAT: "Objects in the schema need additionalProperties: false" - the first open object, by path."""
    from reference_gateway.translate.anthropic.request import _open_object

    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    assert _open_object(closed, "s") is None
    assert _open_object({"type": "object"}, "s") == "s"
    nested = {**closed, "properties": {"a": {"type": "array", "items": {"properties": {"b": {}}}}}}
    assert _open_object(nested, "s") == "s.properties.a.items"
    assert _open_object({"anyOf": [{"type": "string"}, {"type": ["object", "null"]}]}, "s") == "s.anyOf[1]"
    assert _open_object({"type": "string"}, "s") is None
