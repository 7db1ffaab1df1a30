"""Profile `relay` end to end: the gateway on loopback in front of one fake upstream that speaks Anthropic
Messages, OpenAI-compatible Chat Completions and Gemini generateContent, driven by the unchanged `openai` SDK
(and httpx where the raw wire matters)."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import RELAY
from reference_gateway.upstream.client import UpstreamSettings
from tests.reference_gateway.conftest import (
    CLIENT_KEY,
    Answer,
    FakeFamilies,
    ServerThread,
    gemini_answer,
    gemini_sse,
    message,
    openai_chunks,
    sse,
    text_events,
)

USER = [{"role": "user", "content": "hi"}]
IDS = ("x-relay-request-id", "x-relay-trace-id", "x-relay-observation-id")
PDF = "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4 tiny").decode()
PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 200).decode()


def relay_settings(upstream_url: str, state: Path | None, **overrides: Any) -> GatewaySettings:
    return GatewaySettings(
        profile=RELAY,
        catalog=load_catalog(shipped=RELAY.catalog),
        upstream=UpstreamSettings(
            base_url=upstream_url,
            api_key="sk-upstream",
            request_timeout=5.0,
            connect_timeout=2.0,
            stream_idle_timeout=5.0,
        ),
        keys=KeyRing.of([CLIENT_KEY]),
        ping_interval=5.0,
        state_url=f"sqlite:///{state}" if state is not None else None,
        **overrides,
    )


@contextlib.contextmanager
def relay_gateway(upstream_url: str, state: Path | None, **overrides: Any) -> Iterator[str]:
    app = create_app(relay_settings(upstream_url, state, **overrides), Hooks(clock=lambda: 1793318400.0))
    with ServerThread(app) as server:
        yield server.url


@pytest.fixture(scope="module")
def relay_url(
    families_server: tuple[FakeFamilies, ServerThread], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    state = tmp_path_factory.mktemp("relay") / "state.sqlite3"
    with relay_gateway(families_server[1].url, state, max_image_bytes=1024) as url:
        yield url


@pytest.fixture(scope="module")
def cached_url(
    families_server: tuple[FakeFamilies, ServerThread], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    state = tmp_path_factory.mktemp("relay-cache") / "state.sqlite3"
    with relay_gateway(families_server[1].url, state, cache_ttl_seconds=60) as url:
        yield url


@pytest.fixture
def client(relay_url: str, families: FakeFamilies) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{relay_url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=10) as c:
        yield c


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {CLIENT_KEY}", **headers},
        timeout=10,
    )


def data_lines(response: httpx.Response) -> list[str]:
    return [line[6:] for line in response.text.split("\n") if line.startswith("data: ")]


def chunks(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(d) for d in data_lines(response) if d != "[DONE]"]


# ------------------------------------------------------------------------------------------- three families

FAMILIES = [
    ("gpt-4o", "openai", "Hello from OpenAI.", Decimal("9") * Decimal("2.5") + 4 * 10),
    ("claude-sonnet", "anthropic", "Hello there!", Decimal(11 * 3 + 6 * 15)),
    ("gemini-flash", "gemini", "Hello from Gemini.", Decimal("12") * Decimal("0.3") + 5 * Decimal("2.5")),
]


@pytest.mark.parametrize(("model", "family", "text", "micro_usd"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_one_endpoint_three_families_with_ids_and_cost(
    client: openai.OpenAI, families: FakeFamilies, model: str, family: str, text: str, micro_usd: Decimal
) -> None:
    raw = client.chat.completions.with_raw_response.create(model=model, messages=USER)  # type: ignore[arg-type]
    completion = raw.parse()
    assert completion.choices[0].message.content == text
    assert completion.choices[0].finish_reason == "stop"
    assert [c.family for c in families.calls] == [family]
    for name in IDS:
        assert raw.headers.get(name)
    assert Decimal(raw.headers["x-relay-cost-usd"]) == micro_usd / 1_000_000
    if family == "gemini":
        call = families.calls[0]
        assert call.path == "/v1beta/models/gemini-2.5-flash:generateContent"
        assert call.headers["x-goog-api-key"] == "sk-upstream"
        assert call.body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def test_three_answers_get_different_ids(client: openai.OpenAI) -> None:
    seen = [
        client.chat.completions.with_raw_response.create(model="gpt-4o", messages=USER).headers
        for _ in range(2)
    ]  # type: ignore[arg-type]
    for name in IDS:
        assert seen[0][name] != seen[1][name]


@pytest.mark.parametrize(("model", "family"), [(f[0], f[1]) for f in FAMILIES], ids=[f[0] for f in FAMILIES])
def test_metadata_removed_and_user_passed_as_end_user(
    client: openai.OpenAI, families: FakeFamilies, model: str, family: str
) -> None:
    client.chat.completions.create(model=model, messages=USER, user="end-user-7", metadata={"team": "search"})  # type: ignore[arg-type]
    body = families.calls[0].body
    assert "metadata" not in json.dumps(body).replace('"metadata": {"user_id"', "")
    if family == "openai":
        assert body["user"] == "end-user-7"
        assert "metadata" not in body
    elif family == "anthropic":
        assert body["metadata"] == {"user_id": "end-user-7"}
    else:
        assert "user" not in body and "metadata" not in body


def test_errors_carry_the_ids_and_no_cost(relay_url: str, families: FakeFamilies) -> None:
    for response in (
        httpx.post(f"{relay_url}/v1/chat/completions", json={"model": "gpt-4o", "messages": USER}),
        post(relay_url, {"model": "no-such-model", "messages": USER}),
    ):
        assert response.status_code in (401, 404)
        for name in IDS:
            assert response.headers.get(name)
        assert "x-relay-cost-usd" not in response.headers
    assert families.calls == []


def test_models_list_vision(client: openai.OpenAI) -> None:
    models = {m.id: m for m in client.models.list().data}
    assert models["gpt-4o"].capabilities == {"vision": True}  # type: ignore[attr-defined]
    assert models["gpt-3.5-turbo"].capabilities == {"vision": False}  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------- streaming


@pytest.mark.parametrize(("model", "family"), [(f[0], f[1]) for f in FAMILIES], ids=[f[0] for f in FAMILIES])
@pytest.mark.parametrize("include_usage", [False, True])
def test_stream_every_chunk_no_nulls_usage_only_when_asked(
    relay_url: str, families: FakeFamilies, model: str, family: str, include_usage: bool
) -> None:
    body: dict[str, Any] = {"model": model, "messages": USER, "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    response = post(relay_url, body)
    assert response.status_code == 200
    assert data_lines(response)[-1] == "[DONE]"
    got = chunks(response)
    assert "null" not in json.dumps(got)
    usage_chunks = [c for c in got if c["choices"] == []]
    assert len(usage_chunks) == (1 if include_usage else 0)
    assert [c["choices"][0].get("finish_reason") for c in got if c["choices"]][-1] == "stop"
    for name in IDS:
        assert response.headers.get(name)
    assert "x-relay-cost-usd" not in response.headers
    sent = families.calls[0]
    if family == "openai":
        # "Relay always requests it from the provider".
        assert sent.body["stream_options"] == {"include_usage": True}
    if family == "gemini":
        assert sent.path.endswith(":streamGenerateContent") and sent.query == "alt=sse"


def test_stream_with_the_openai_sdk_assembles_text(client: openai.OpenAI) -> None:
    for model in ("gpt-4o", "claude-sonnet", "gemini-flash"):
        stream = client.chat.completions.create(model=model, messages=USER, stream=True)  # type: ignore[arg-type]
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text in ("Hi", "Hello there!", "Hello")


def test_gemini_function_calls_stream_as_fragments(client: openai.OpenAI, families: FakeFamilies) -> None:
    event = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
                },
                "finishReason": "STOP",
            }
        ]
    }
    families.script.append(
        Answer(body=b"data: " + json.dumps(event).encode() + b"\n\n", content_type="text/event-stream")
    )
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "additionalProperties": False}},
    }
    stream = client.chat.completions.create(model="gemini-flash", messages=USER, tools=[tool], stream=True)  # type: ignore[arg-type,list-item]
    calls: dict[int, dict[str, str]] = {}
    finish = None
    for chunk in stream:
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        for fragment in choice.delta.tool_calls or []:
            entry = calls.setdefault(fragment.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] = fragment.id or entry["id"]
            if fragment.function is not None:
                entry["name"] = fragment.function.name or entry["name"]
                entry["arguments"] += fragment.function.arguments or ""
    assert finish == "tool_calls"
    assert calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"]) == {"city": "Paris"}
    assert calls[0]["id"].startswith("call_")
    declaration = families.calls[0].body["tools"][0]["functionDeclarations"][0]
    assert declaration["parameters"] == {"type": "object"}  # additionalProperties removed


def test_mid_stream_failure_is_an_error_line_without_done_and_no_retry(
    relay_url: str, families: FakeFamilies
) -> None:
    events = b"".join(sse(e) for e in text_events("Hello there, a long answer"))
    cut = events.index(b"content_block_delta") + 200  # after the first text delta
    families.script.append(Answer(body=events, content_type="text/event-stream", drop_after=cut))
    response = post(relay_url, {"model": "claude-sonnet", "messages": USER, "stream": True})
    lines = data_lines(response)
    assert "[DONE]" not in lines
    last = json.loads(lines[-1])
    assert set(last) == {"error"} and set(last["error"]) == {"message", "type", "code"}
    assert any(c["choices"] and c["choices"][0]["delta"].get("content") for c in chunks(response)[:-1])
    assert len(families.calls) == 1  # output had begun: no retry, no fallback


def test_failure_before_the_first_token_is_retried_then_falls_back(
    relay_url: str, families: FakeFamilies
) -> None:
    overloaded = Answer(status=503, body=b'{"error": {"message": "busy", "type": "server_error"}}')
    families.script.extend([overloaded, overloaded])
    response = post(relay_url, {"model": "gpt-4o", "messages": USER, "stream": True})
    assert response.status_code == 200 and data_lines(response)[-1] == "[DONE]"
    # gpt-4o twice (one transient retry), then its fallback claude-sonnet.
    assert [c.family for c in families.calls] == ["openai", "openai", "anthropic"]
    # A stream that closes before any output is a failure before the first token too.
    families.reset()
    families.script.append(
        Answer(body=gemini_sse(finish=False)[:0] + b": keepalive\n\n", content_type="text/event-stream")
    )
    response = post(relay_url, {"model": "gemini-flash", "messages": USER, "stream": True})
    assert response.status_code == 200 and data_lines(response)[-1] == "[DONE]"
    assert [c.family for c in families.calls] == ["gemini", "gemini"]


def test_non_streaming_fallback_and_non_transient_errors(
    client: openai.OpenAI, families: FakeFamilies
) -> None:
    down = Answer(status=500, body=b'{"error": {"message": "down"}}')
    families.script.extend([down, down])
    completion = client.chat.completions.create(model="gemini-flash", messages=USER)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "Hello from OpenAI."  # gpt-4o-mini, the fallback
    assert [c.family for c in families.calls] == ["gemini", "gemini", "openai"]
    families.reset()
    families.script.append(
        Answer(
            status=400,
            body=b'{"error": {"code": 400, "message": "bad schema", "status": "INVALID_ARGUMENT"}}',
        )
    )
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gemini-flash", messages=USER)  # type: ignore[arg-type]
    assert len(families.calls) == 1


# ------------------------------------------------------------------------------------------- content parts


@pytest.mark.e2e
def test_image_too_large_and_invalid_image_url_before_routing(relay_url: str, families: FakeFamilies) -> None:
    big = "data:image/png;base64," + base64.b64encode(b"\0" * 1025).decode()  # this gateway: 1024 bytes
    for url, code in (
        (big, "image_too_large"),
        ("ftp://example.com/a.png", "invalid_image_url"),
        ("data:image/png;base64,@@@", "invalid_image_url"),
    ):
        content = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": url}}]
        # Even for a model the catalog does not know: refused before anything is routed.
        for model in ("gpt-4o", "no-such-model"):
            response = post(relay_url, {"model": model, "messages": [{"role": "user", "content": content}]})
            assert response.status_code == 400
            assert response.json()["error"]["type"] == "invalid_request_error"
            assert response.json()["error"]["code"] == code
    exact = "data:image/png;base64," + base64.b64encode(b"\0" * 1024).decode()
    content = [{"type": "image_url", "image_url": {"url": exact}}]
    assert (
        post(relay_url, {"model": "gpt-4o", "messages": [{"role": "user", "content": content}]}).status_code
        == 200
    )
    assert len(families.calls) == 1


PARTS = [
    {"type": "text", "text": "Read this", "cache_control": {"type": "ephemeral"}},
    {"type": "file", "file": {"file_data": PDF}},
    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
]


def test_content_parts_per_family(client: openai.OpenAI, families: FakeFamilies) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PARTS}]
    for model in ("gpt-4o", "claude-sonnet", "gemini-flash"):
        client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
    openai_body, anthropic_body, gemini_body = (c.body for c in families.calls)
    # OpenAI-compatible: the shape kept (string stays string, parts stay parts, the file and audio unchanged).
    assert openai_body["messages"][0]["content"] == "Be brief."
    assert [p["type"] for p in openai_body["messages"][1]["content"]] == ["text", "file", "input_audio"]
    assert openai_body["messages"][1]["content"][1] == PARTS[1]
    # Anthropic: a document block, the audio dropped.
    blocks = anthropic_body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "document"]
    assert blocks[1]["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": PDF.split(",", 1)[1],
    }
    # Gemini: inlineData, the audio dropped.
    parts = gemini_body["contents"][0]["parts"]
    assert parts == [
        {"text": "Read this"},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF.split(",", 1)[1]}},
    ]
    assert gemini_body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}


def test_images_to_a_text_only_model_are_refused(relay_url: str, families: FakeFamilies) -> None:
    content = [{"type": "image_url", "image_url": {"url": PNG}}]
    response = post(relay_url, {"model": "gpt-3.5-turbo", "messages": [{"role": "user", "content": content}]})
    assert response.status_code == 400 and response.json()["error"]["code"] == "image_not_supported"
    assert families.calls == []


# ------------------------------------------------------------------------------------------- Anthropic


TOOLS = [
    {"type": "function", "function": {"name": "first_tool", "parameters": {"type": "object"}}},
    {
        "type": "function",
        "function": {"name": "last_tool", "parameters": {"type": "object"}},
        "cache_control": {"type": "ephemeral"},
    },
]
LOOP = [
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "first_tool", "arguments": '{"city":"Paris"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "first_tool", "arguments": '{"city":"Rome"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c":21}'},
    {"role": "tool", "tool_call_id": "call_2", "content": '{"temp_c":25}'},
]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", {"type": "any", "disable_parallel_tool_use": True}),
        ("none", {"type": "none"}),
        (
            {"type": "function", "function": {"name": "last_tool"}},
            {"type": "tool", "name": "last_tool", "disable_parallel_tool_use": True},
        ),
    ],
)
def test_anthropic_tool_table(
    client: openai.OpenAI, families: FakeFamilies, choice: Any, expected: Any
) -> None:
    system = [{"type": "text", "text": "A long system prompt.", "cache_control": {"type": "ephemeral"}}]
    client.chat.completions.create(
        model="claude-sonnet",
        messages=[{"role": "system", "content": system}, *LOOP],  # type: ignore[list-item]
        tools=TOOLS,  # type: ignore[arg-type]
        tool_choice=choice,
        parallel_tool_calls=False,
    )
    body = families.calls[0].body
    assert body["tool_choice"] == expected
    assert body["system"] == [
        {"type": "text", "text": "A long system prompt.", "cache_control": {"type": "ephemeral"}}
    ]
    assert (
        body["tools"][1]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in body["tools"][0]
    )
    assert [b["type"] for b in body["messages"][1]["content"]] == ["tool_use", "tool_use"]
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": '{"temp_c":21}'},
            {"type": "tool_result", "tool_use_id": "call_2", "content": '{"temp_c":25}'},
        ],
    }


def test_cache_usage_inside_prompt_tokens_and_priced(client: openai.OpenAI, families: FakeFamilies) -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 200,
    }
    families.script.append(Answer(body=json.dumps(message(usage=usage)).encode()))
    raw = client.chat.completions.with_raw_response.create(model="claude-sonnet", messages=USER)  # type: ignore[arg-type]
    got = raw.parse().usage
    assert got is not None and got.prompt_tokens == 1210 and got.total_tokens == 1215
    details = got.prompt_tokens_details
    assert details is not None and details.cached_tokens == 1000
    assert details.model_extra == {"cache_creation_tokens": 200}
    expected = (
        Decimal(10 * 3) + Decimal(1000) * Decimal("0.3") + Decimal(200) * Decimal("3.75") + 5 * 15
    ) / 1_000_000
    assert Decimal(raw.headers["x-relay-cost-usd"]) == expected


def test_plain_system_string_joined_and_no_breakpoint(client: openai.OpenAI, families: FakeFamilies) -> None:
    client.chat.completions.create(
        model="claude-sonnet",
        messages=[{"role": "system", "content": "One."}, {"role": "system", "content": "Two."}, *USER],
    )
    assert families.calls[0].body["system"] == [{"type": "text", "text": "One.\n\nTwo."}]


def test_output_config_to_anthropic_only_and_thinking_not_carried(
    client: openai.OpenAI, families: FakeFamilies
) -> None:
    families.script.append(Answer(body=json.dumps(message("Answer.", thinking="secret")).encode()))
    completion = client.chat.completions.create(
        model="claude-opus", messages=USER, extra_body={"output_config": {"effort": "medium"}}
    )
    assert families.calls[0].body["output_config"] == {"effort": "medium"}
    assert completion.choices[0].message.content == "Answer."
    assert "secret" not in completion.model_dump_json()
    client.chat.completions.create(
        model="gpt-4o", messages=USER, extra_body={"output_config": {"effort": "medium"}}
    )
    client.chat.completions.create(
        model="gemini-flash", messages=USER, extra_body={"output_config": {"effort": "medium"}}
    )
    assert "output_config" not in families.calls[1].body and "output_config" not in families.calls[2].body


def web_search_message(stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_ws",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "Let me search."},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "relay gateway"},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://a.example/",
                        "title": "A",
                        "encrypted_content": "x",
                        "page_age": "1 day",
                    }
                ],
            },
            {
                "type": "text",
                "text": "Relay is a gateway.",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": "https://a.example/",
                        "title": "A",
                        "encrypted_index": "y",
                        "cited_text": "Relay is",
                    }
                ],
            },
        ],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 20, "server_tool_use": {"web_search_requests": 1}},
    }


@pytest.mark.parametrize("stop_reason", ["end_turn", "pause_turn"])
def test_anthropic_tools_web_search(relay_url: str, families: FakeFamilies, stop_reason: str) -> None:
    families.script.append(Answer(body=json.dumps(web_search_message(stop_reason)).encode()))
    server = [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        {"type": "code_execution_20250522", "name": "code_execution"},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
    ]
    response = post(
        relay_url, {"model": "claude-sonnet", "messages": USER, "tools": TOOLS[:1], "anthropic_tools": server}
    )
    answer = response.json()
    tools = families.calls[0].body["tools"]
    assert [t.get("type", "function") for t in tools] == [
        "function",
        "web_search_20250305",
        "web_fetch_20250910",
    ]
    assert tools[1] == server[0]
    assert answer["choices"][0]["message"]["content"] == "Let me search.Relay is a gateway."
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["relay_web_search"] == {
        "queries": ["relay gateway"],
        "results": [{"url": "https://a.example/", "title": "A", "page_age": "1 day"}],
        "citations": [{"url": "https://a.example/", "title": "A", "cited_text": "Relay is"}],
        "answer": "Relay is a gateway.",
        "errors": [],
        "requests": 1,
        "paused": stop_reason == "pause_turn",
    }


def test_anthropic_tools_dropped_on_fallback(relay_url: str, families: FakeFamilies) -> None:
    families.script.extend(
        [Answer(status=529, body=b'{"type":"error","error":{"type":"overloaded_error","message":"x"}}')] * 2
    )
    server = [{"type": "web_search_20250305", "name": "web_search"}]
    response = post(
        relay_url,
        {
            "model": "claude-sonnet",
            "messages": USER,
            "anthropic_tools": server,
            "output_config": {"effort": "low"},
        },
    )
    assert response.status_code == 200
    fallback = families.calls[-1]
    assert fallback.family == "openai"
    assert "anthropic_tools" not in fallback.body and "output_config" not in fallback.body
    assert "relay_web_search" not in response.json()


# ------------------------------------------------------------------------------------------- idempotency, cache


def test_idempotency_key_replays_with_cost_zero(relay_url: str, families: FakeFamilies) -> None:
    body = {"model": "gpt-4o", "messages": USER}
    first = post(relay_url, body, **{"Idempotency-Key": "idem-replay-1"})
    second = post(relay_url, body, **{"Idempotency-Key": "idem-replay-1"})
    assert first.status_code == second.status_code == 200
    assert "idempotency-replayed" not in first.headers and Decimal(first.headers["x-relay-cost-usd"]) > 0
    assert second.headers["idempotency-replayed"] == "true" and second.headers["x-relay-cost-usd"] == "0"
    assert second.content == first.content
    assert second.headers["x-relay-request-id"] != first.headers["x-relay-request-id"]
    assert len(families.calls) == 1
    # Another key, a changed body, a stream: not replays.
    assert "idempotency-replayed" not in post(relay_url, body, **{"Idempotency-Key": "idem-replay-2"}).headers
    reused = post(relay_url, {**body, "temperature": 0.5}, **{"Idempotency-Key": "idem-replay-1"})
    assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency_key_reused"
    for _ in range(2):
        post(relay_url, {**body, "stream": True}, **{"Idempotency-Key": "idem-stream"})
    assert len(families.calls) == 4


def test_failed_answer_is_not_stored(relay_url: str, families: FakeFamilies) -> None:
    families.script.append(Answer(status=400, body=b'{"error": {"message": "bad"}}'))
    body = {"model": "gpt-4o", "messages": USER}
    assert post(relay_url, body, **{"Idempotency-Key": "idem-fail"}).status_code == 400
    retry = post(relay_url, body, **{"Idempotency-Key": "idem-fail"})
    assert retry.status_code == 200 and "idempotency-replayed" not in retry.headers
    assert len(families.calls) == 2


def test_response_cache_hit_miss_and_bypass(cached_url: str, families: FakeFamilies) -> None:
    body = {"model": "claude-sonnet", "messages": [{"role": "user", "content": "cache me"}]}
    miss = post(cached_url, body)
    hit = post(cached_url, body)
    assert (miss.headers["x-relay-cache"], hit.headers["x-relay-cache"]) == ("MISS", "HIT")
    assert hit.headers["x-relay-cost-usd"] == "0" and hit.content == miss.content
    assert len(families.calls) == 1
    for value in ("no", "false", "bypass", "BYPASS"):
        bypassed = post(cached_url, body, **{"X-Relay-Cache": value})
        assert bypassed.headers["x-relay-cache"] == "MISS"
    assert len(families.calls) == 5
    stream = post(cached_url, {**body, "stream": True})
    assert "x-relay-cache" not in stream.headers
    assert len(families.calls) == 6


def test_cache_off_by_default(relay_url: str, families: FakeFamilies) -> None:
    body = {"model": "claude-sonnet", "messages": USER}
    assert "x-relay-cache" not in post(relay_url, body).headers
    post(relay_url, body)
    assert len(families.calls) == 2


def test_openai_stream_upstream_failure_before_done(relay_url: str, families: FakeFamilies) -> None:
    families.script.append(
        Answer(body=openai_chunks(done=False, usage=False), content_type="text/event-stream")
    )
    response = post(relay_url, {"model": "gpt-4o", "messages": USER, "stream": True})
    lines = data_lines(response)
    assert "[DONE]" not in lines and "error" in json.loads(lines[-1])
    assert len(families.calls) == 1


def test_gemini_non_streaming_tool_calls_get_minted_ids(
    client: openai.OpenAI, families: FakeFamilies
) -> None:
    parts = [{"functionCall": {"name": "f", "args": {"a": 1}}}, {"functionCall": {"name": "g", "args": {}}}]
    families.script.append(Answer(body=json.dumps(gemini_answer(parts=parts)).encode()))
    completion = client.chat.completions.create(model="gemini-pro", messages=USER)  # type: ignore[arg-type]
    calls = completion.choices[0].message.tool_calls or []
    assert completion.choices[0].finish_reason == "tool_calls"
    assert [c.function.name for c in calls] == ["f", "g"]  # type: ignore[union-attr]
    assert len({c.id for c in calls}) == 2 and all(c.id.startswith("call_") for c in calls)
