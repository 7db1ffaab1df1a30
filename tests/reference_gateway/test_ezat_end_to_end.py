"""The gateway end to end: uvicorn on loopback, the fake Anthropic upstream, and the unchanged `openai` SDK."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import openai
import pytest

from reference_gateway.app import Hooks, create_app
from tests.reference_gateway.conftest import (
    CLIENT_KEY,
    UPSTREAM_KEY,
    FakeAnthropic,
    Reply,
    ServerThread,
    gateway_settings,
    message,
    text_events,
)

MODEL = "anthropic/claude-sonnet-5-5"
USER = [{"role": "user", "content": "hi"}]


def test_create_translates_answer_usage_and_ids(client: openai.OpenAI, fake: FakeAnthropic) -> None:
    fake.reply(
        Reply(
            body=message(
                "A prompt cache stores…",
                thinking="secret reasoning",
                usage={
                    "input_tokens": 10,
                    "output_tokens": 20,
                    "cache_read_input_tokens": 100,
                    "cache_creation_input_tokens": 5,
                    "output_tokens_details": {"thinking_tokens": 7},
                },
            )
        )
    )
    raw = client.chat.completions.with_raw_response.create(
        model=MODEL,
        max_completion_tokens=64,
        messages=[
            {"role": "system", "content": "Answer in one sentence."},
            {"role": "user", "content": "Q?"},
        ],
    )
    completion = raw.parse()
    assert completion.id == f"chatcmpl-{raw.headers['request-id']}"
    assert completion.model == MODEL
    assert completion.created == 1793318400
    assert completion.choices[0].message.content == "A prompt cache stores…"
    assert completion.choices[0].finish_reason == "stop"
    usage = completion.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (115, 20, 135)
    assert usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 100
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 7
    sent = fake.received[-1]
    assert sent.headers["x-api-key"] == UPSTREAM_KEY
    assert CLIENT_KEY not in json.dumps(sent.headers)
    assert sent.headers["anthropic-version"]
    assert sent.body["model"] == "claude-sonnet-5-5"
    assert sent.body["max_tokens"] == 64
    assert sent.body["system"][0]["text"] == "Answer in one sentence."


def test_stream_with_include_usage(client: openai.OpenAI, fake: FakeAnthropic) -> None:
    fake.reply(
        Reply(
            events=text_events(
                "Counting 1 2 3",
                usage={"input_tokens": 12, "cache_read_input_tokens": 3, "output_tokens": 1},
                final_usage={"output_tokens": 9},
            )
        )
    )
    with client.chat.completions.with_streaming_response.create(
        model=MODEL, messages=USER, stream=True, stream_options={"include_usage": True}
    ) as response:
        request_id = response.headers["request-id"]
        chunks = list(response.parse())
    assert {c.id for c in chunks} == {f"chatcmpl-{request_id}"}
    assert len({(c.created, c.model) for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Counting 1 2 3"
    finishes = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finishes) == 1 and finishes[0].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (15, 9)
    assert all(c.usage is None for c in chunks[:-1])
    assert fake.last["stream"] is True


def test_two_step_tool_loop(client: openai.OpenAI, fake: FakeAnthropic) -> None:
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    fake.reply(
        Reply(
            body=message(
                "I'll check.",
                tool_uses=[{"id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}],
                stop_reason="tool_use",
            )
        ),
        Reply(body=message("9°C and clear in Oslo.")),
    )
    messages: list[Any] = [{"role": "user", "content": "What's the weather in Oslo? Use the tool."}]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
    assert first.choices[0].finish_reason == "tool_calls"
    reply = first.choices[0].message
    assert reply.tool_calls is not None and json.loads(reply.tool_calls[0].function.arguments) == {
        "city": "Oslo"
    }
    messages.append(reply)
    for call in reply.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "9°C and clear"})
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)
    assert second.choices[0].message.content == "9°C and clear in Oslo."
    sent = fake.last["messages"]
    assert sent[1]["role"] == "assistant"
    assert sent[1]["content"][-1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }
    assert sent[2]["role"] == "user"
    assert (
        sent[2]["content"][0]["type"] == "tool_result" and sent[2]["content"][0]["tool_use_id"] == "toolu_1"
    )
    assert fake.last["tools"][0]["input_schema"]["required"] == ["city"]


def test_streamed_tool_call_and_json_schema(client: openai.OpenAI, fake: FakeAnthropic) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    fake.reply(Reply(body=message('{"a": 1}')))
    completion = client.chat.completions.create(
        model=MODEL,
        messages=USER,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "a", "schema": schema, "strict": True},
        },
    )
    assert json.loads(completion.choices[0].message.content or "") == {"a": 1}
    assert fake.last["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    assert "response_format" not in fake.last


@pytest.mark.parametrize(
    ("reply", "exception", "status", "code"),
    [
        (
            Reply(
                status=400,
                body={
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "max_tokens: too big"},
                },
            ),
            openai.BadRequestError,
            400,
            None,
        ),
        (
            Reply(
                status=401,
                body={"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
            ),
            openai.InternalServerError,
            500,
            None,
        ),
        (
            Reply(status=402, body={"type": "error", "error": {"type": "billing_error", "message": "pay"}}),
            openai.APIStatusError,
            402,
            "insufficient_quota",
        ),
        (
            Reply(status=403, body={"type": "error", "error": {"type": "permission_error", "message": "no"}}),
            openai.PermissionDeniedError,
            403,
            None,
        ),
        (
            Reply(
                status=404, body={"type": "error", "error": {"type": "not_found_error", "message": "model"}}
            ),
            openai.NotFoundError,
            404,
            "model_not_found",
        ),
        (
            Reply(
                status=413, body={"type": "error", "error": {"type": "request_too_large", "message": "big"}}
            ),
            openai.APIStatusError,
            413,
            "request_too_large",
        ),
        (
            Reply(
                status=429,
                headers={"retry-after": "7"},
                body={"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}},
            ),
            openai.RateLimitError,
            429,
            "rate_limit_exceeded",
        ),
        (
            Reply(status=500, body={"type": "error", "error": {"type": "api_error", "message": "boom"}}),
            openai.InternalServerError,
            500,
            None,
        ),
        (
            Reply(
                status=529,
                headers={"retry-after": "3"},
                body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ),
            openai.InternalServerError,
            503,
            "overloaded",
        ),
        (
            Reply(status=504, body={"type": "error", "error": {"type": "timeout_error", "message": "slow"}}),
            openai.InternalServerError,
            504,
            "timeout",
        ),
        (Reply(status=502, raw=b"<html>bad gateway</html>"), openai.InternalServerError, 500, None),
    ],
    ids=["400", "401-upstream", "402", "403", "404", "413", "429", "500", "529", "504", "502-html"],
)
def test_upstream_errors_become_sdk_exceptions(
    client: openai.OpenAI,
    fake: FakeAnthropic,
    reply: Reply,
    exception: type[Exception],
    status: int,
    code: str | None,
) -> None:
    for stream in (False, True):
        fake.reply(reply)
        with pytest.raises(exception) as info:
            result = client.chat.completions.create(model=MODEL, messages=USER, stream=stream)
            list(result) if stream else None  # type: ignore[call-overload]
        error = info.value
        assert isinstance(error, openai.APIStatusError)
        assert error.status_code == status
        assert error.code == code
        body = error.response.json()
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert error.response.headers["request-id"]
        if status in (429, 503):
            assert error.response.headers["retry-after"] == reply.headers["retry-after"]


@pytest.mark.parametrize(
    ("key", "model", "status", "exception", "code", "param"),
    [
        ("wrong", MODEL, 401, openai.AuthenticationError, "invalid_api_key", None),
        (
            CLIENT_KEY,
            "anthropic/claude-does-not-exist",
            404,
            openai.NotFoundError,
            "model_not_found",
            "model",
        ),
    ],
    ids=["401-client-key", "404-unknown-model"],
)
def test_gateway_errors(
    gateway_url: str,
    fake: FakeAnthropic,
    key: str,
    model: str,
    status: int,
    exception: type[Exception],
    code: str,
    param: str | None,
) -> None:
    with (
        openai.OpenAI(base_url=f"{gateway_url}/v1", api_key=key, max_retries=0) as c,
        pytest.raises(exception) as info,
    ):
        c.chat.completions.create(model=model, messages=USER)
    error = info.value
    assert isinstance(error, openai.APIStatusError)
    assert (error.status_code, error.code, error.param) == (status, code, param)
    if status == 404:
        assert error.response.json()["error"]["message"] == (
            "The model `anthropic/claude-does-not-exist` does not exist or you do not have access to it."
        )
    assert fake.received == []


def test_missing_key_is_401(gateway_url: str, fake: FakeAnthropic) -> None:
    response = httpx.post(f"{gateway_url}/v1/chat/completions", json={"model": MODEL, "messages": USER})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert response.headers["request-id"]


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
def test_refusal_before_any_upstream_call(client: openai.OpenAI, fake: FakeAnthropic, stream: bool) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model=MODEL, messages=USER, n=2, stream=stream)
    assert info.value.body == {
        "message": "n: only 1 choice per request is supported",
        "type": "invalid_request_error",
        "param": "n",
        "code": None,
    }
    assert fake.received == []


@pytest.mark.e2e
def test_body_over_32_mb_is_413(gateway_url: str, fake: FakeAnthropic) -> None:
    big = {"model": MODEL, "messages": [{"role": "user", "content": "x" * (32 * 1024 * 1024 + 10)}]}
    with (
        openai.OpenAI(base_url=f"{gateway_url}/v1", api_key=CLIENT_KEY, max_retries=0) as c,
        pytest.raises(openai.APIStatusError) as info,
    ):
        c.chat.completions.create(**big)
    assert info.value.status_code == 413
    assert info.value.code == "request_too_large"
    assert fake.received == []


def test_mid_stream_error_becomes_error_event_then_done(gateway_url: str, fake: FakeAnthropic) -> None:
    events = text_events("Hello there, friend")[:4]
    events.append(
        {"type": "error", "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"}}
    )
    fake.reply(Reply(events=events))
    raw = _raw_stream(
        gateway_url,
        {"model": MODEL, "messages": USER, "stream": True, "stream_options": {"include_usage": True}},
    )
    payloads = [line[6:] for line in raw.split("\n") if line.startswith("data: ")]
    assert payloads[-1] == "[DONE]"
    error = json.loads(payloads[-2])["error"]
    assert (error["type"], error["code"]) == ("server_error", "overloaded")
    assert not any('"choices":[]' in p for p in payloads)
    with openai.OpenAI(base_url=f"{gateway_url}/v1", api_key=CLIENT_KEY, max_retries=0) as c:
        fake.reply(Reply(events=events))
        with pytest.raises(openai.APIError):
            list(c.chat.completions.create(model=MODEL, messages=USER, stream=True))


@pytest.mark.parametrize("drop", ["connection", "no-message-stop"])
def test_broken_upstream_stream_is_an_error_not_a_stop(
    gateway_url: str, fake: FakeAnthropic, drop: str
) -> None:
    events = text_events("Hello there, friend")
    if drop == "connection":
        fake.reply(Reply(events=events, drop_after=4))
    else:
        fake.reply(Reply(events=events[:-1]))
    raw = _raw_stream(gateway_url, {"model": MODEL, "messages": USER, "stream": True})
    payloads = [line[6:] for line in raw.split("\n") if line.startswith("data: ")]
    assert payloads[-1] == "[DONE]"
    assert "error" in json.loads(payloads[-2])
    assert not any('"finish_reason":"stop"' in p for p in payloads)


@pytest.mark.e2e
def test_pings_while_upstream_is_silent(gateway_url: str, fake: FakeAnthropic) -> None:
    fake.reply(Reply(events=text_events("slow"), gap=0.2))
    raw = _raw_stream(gateway_url, {"model": MODEL, "messages": USER, "stream": True})
    assert ": ping\n\n" in raw
    assert raw.endswith("data: [DONE]\n\n")


def test_client_disconnect_closes_upstream_at_once(gateway_url: str, fake: FakeAnthropic) -> None:
    fake.reply(Reply(events=text_events("x" * 400), gap=0.05))
    with httpx.stream(
        "POST",
        f"{gateway_url}/v1/chat/completions",
        headers={"authorization": f"Bearer {CLIENT_KEY}"},
        json={"model": MODEL, "messages": USER, "stream": True},
    ) as response:
        for line in response.iter_lines():
            if '"content":"xxxx"' in line:
                break
    assert fake.stream_closed.wait(2), "the upstream stream was not closed"
    assert fake.events_sent < 50


@pytest.mark.e2e
def test_non_streaming_timeout_is_504(fake_server: tuple[FakeAnthropic, ServerThread]) -> None:
    fake, upstream = fake_server
    fake.reset()
    fake.reply(Reply(body=message(), delay=1.0))
    app = create_app(gateway_settings(upstream.url, request_timeout=0.3), Hooks())
    with (
        ServerThread(app) as server,
        openai.OpenAI(base_url=f"{server.url}/v1", api_key=CLIENT_KEY, max_retries=0) as c,
        pytest.raises(openai.InternalServerError) as info,
    ):
        c.chat.completions.create(model=MODEL, messages=USER)
    assert (info.value.status_code, info.value.code) == (504, "timeout")
    time.sleep(0.8)  # let the fake finish its delayed answer before the next test resets it


def test_models_endpoints(gateway_url: str) -> None:
    auth = {"authorization": f"Bearer {CLIENT_KEY}"}
    listed = httpx.get(f"{gateway_url}/openai/v1/models", headers=auth).json()
    ids = {m["id"] for m in listed["data"]}
    assert {"anthropic/claude-sonnet-5-5", "anthropic/claude-haiku-4-5", "anthropic/claude-haiku-3-5"} <= ids
    assert listed["object"] == "list"
    caps = {m["id"]: m["capabilities"] for m in httpx.get(f"{gateway_url}/api/models").json()["data"]}
    assert caps["anthropic/claude-haiku-4-5"]["sampling"] is True
    assert "xhigh" not in caps["anthropic/claude-haiku-4-5"]["reasoning_efforts"]
    assert caps["anthropic/claude-opus-4-8"]["forced_tool_choice"] is False
    assert caps["anthropic/claude-haiku-3-5"]["max_output_tokens"] == 8192
    health = httpx.get(f"{gateway_url}/healthz")
    assert health.status_code == 200 and health.headers["request-id"]
    assert httpx.get(f"{gateway_url}/v1/models").status_code == 401


def _raw_stream(gateway_url: str, body: dict[str, Any]) -> str:
    response = httpx.post(
        f"{gateway_url}/v1/chat/completions",
        headers={"authorization": f"Bearer {CLIENT_KEY}"},
        json=body,
        timeout=10,
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return response.text


def test_a_kept_responses_input_items_through_the_sdk_and_their_refusals(
    client: openai.OpenAI, gateway_url: str, fake: FakeAnthropic
) -> None:
    fake.reply(Reply(body=message("TULIP it is.")))
    created = client.responses.create(model=MODEL, input="Remember the word TULIP.")
    page = client.responses.input_items.list(created.id)
    (item,) = page.data
    assert item.type == "message" and item.role == "user"
    assert [c.text for c in item.content] == ["Remember the word TULIP."]  # type: ignore[union-attr]
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    base = f"{gateway_url}/v1/responses/{created.id}/input_items"
    bad_order = httpx.get(base, params={"order": "newest"}, headers=headers)
    assert bad_order.status_code == 400 and bad_order.json()["error"]["param"] == "order"
    bad_limit = httpx.get(base, params={"limit": "0"}, headers=headers)
    assert bad_limit.status_code == 400 and bad_limit.json()["error"]["param"] == "limit"
    unknown = httpx.get(f"{gateway_url}/v1/responses/resp_gc_unknown/input_items", headers=headers)
    assert unknown.status_code == 404 and "not found" in unknown.json()["error"]["message"]
