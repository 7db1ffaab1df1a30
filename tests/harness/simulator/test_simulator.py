"""The live provider simulator answers from the request alone: limits, stop sequences, tools, thinking, caching,
output schemas, and streams cut at arbitrary byte offsets."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import jsonschema
import pytest

from harness.errors import SimulatorRequestError
from harness.simulator import core as sim
from harness.simulator import gemini as gem
from harness.simulator import wire
from harness.simulator.app import SimulatorServer

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
}


def _anthropic(**fields: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "hello there"}],
        **fields,
    }


def _gen(body: dict[str, Any], seed: int = 1, cache: sim.PrefixCache | None = None) -> sim.Generated:
    return sim.generate(wire.anthropic_ask(body), random.Random(seed), cache or sim.PrefixCache(), "toolu_")


def test_text_varies_and_ends_the_turn() -> None:
    answers = {_gen(_anthropic(), seed).text for seed in range(8)}
    assert len(answers) > 1 and all(answers)
    assert {_gen(_anthropic(), s).stop for s in range(8)} == {"end"}


def test_max_tokens_is_honoured_with_the_right_stop_reason() -> None:
    gen = _gen(_anthropic(max_tokens=1))
    assert gen.stop == "max_tokens" and gen.output_tokens == 1
    message = wire.anthropic_message(gen, "m", "msg_1", "sig")
    assert message["stop_reason"] == "max_tokens"
    completion = wire.openai_completion(
        sim.generate(
            wire.openai_ask({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}),
            random.Random(1),
            sim.PrefixCache(),
            "call_",
        ),
        "m",
        "c",
        1,
    )
    assert completion["choices"][0]["finish_reason"] == "length"


def test_stop_sequences_cut_the_text() -> None:
    gen = _gen(
        _anthropic(stop_sequences=["STOP"], messages=[{"role": "user", "content": "say one two STOP three"}])
    )
    assert gen.stop == "stop_sequence" and gen.stop_sequence == "STOP" and "STOP" not in gen.text


def test_explicit_instructions_are_followed_wherever_they_are_given() -> None:
    ask = "What is a prompt cache?"
    system = _gen(
        _anthropic(system="Reply with only the word ZEBRA.", messages=[{"role": "user", "content": ask}])
    )
    assert system.text == "ZEBRA" and system.stop == "end"
    openai = wire.openai_ask(
        {
            "messages": [
                {
                    "role": "developer",
                    "content": [{"type": "text", "text": "Reply with only the word OTTER."}],
                },
                {"role": "user", "content": ask},
            ]
        }
    )
    assert sim.generate(openai, random.Random(1), sim.PrefixCache(), "call_").text == "OTTER"
    # Nothing instructs the model: it answers in its own words, never the word of another conversation.
    assert "ZEBRA" not in _gen(_anthropic(messages=[{"role": "user", "content": ask}])).text
    counted = _gen(
        _anthropic(messages=[{"role": "user", "content": "Count from 1 to 10."}], stop_sequences=["5"])
    )
    assert counted.text == "1, 2, 3, 4, " and counted.stop == "stop_sequence"
    assert _gen(_anthropic(messages=[{"role": "user", "content": "Count from 1 to 3."}])).text == "1, 2, 3."


def test_forced_auto_and_no_tool_choice() -> None:
    tools = [
        {"name": "get_weather", "input_schema": WEATHER},
        {"name": "get_time", "input_schema": {"type": "object"}},
    ]
    forced = _gen(_anthropic(tools=tools, tool_choice={"type": "tool", "name": "get_time"}))
    assert [c.name for c in forced.tool_calls] == ["get_time"] and forced.stop == "tool"
    auto = _gen(_anthropic(tools=tools, messages=[{"role": "user", "content": "The weather in Oslo?"}]))
    assert [c.name for c in auto.tool_calls] == ["get_weather"]
    jsonschema.validate(dict(auto.tool_calls[0].arguments), WEATHER)
    unrelated = _gen(_anthropic(tools=tools))
    assert unrelated.tool_calls == () and unrelated.stop == "end"
    none = _gen(
        _anthropic(
            tools=tools, tool_choice={"type": "none"}, messages=[{"role": "user", "content": "weather?"}]
        )
    )
    assert none.tool_calls == ()
    both = _gen(_anthropic(tools=tools, messages=[{"role": "user", "content": "weather and time please"}]))
    assert [c.name for c in both.tool_calls] == ["get_weather", "get_time"]
    one = _gen(
        _anthropic(
            tools=tools,
            tool_choice={"type": "auto", "disable_parallel_tool_use": True},
            messages=[{"role": "user", "content": "weather and time"}],
        )
    )
    assert len(one.tool_calls) == 1


def test_a_tool_result_is_answered_in_text() -> None:
    tools = [{"name": "get_weather", "input_schema": WEATHER}]
    messages = [
        {"role": "user", "content": "weather in Oslo?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Oslo"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]},
    ]
    assert _gen(_anthropic(tools=tools, messages=messages)).tool_calls == ()


def test_thinking_when_asked() -> None:
    gen = _gen(_anthropic(thinking={"type": "enabled", "budget_tokens": 1024}))
    assert gen.thinking and gen.thinking_tokens > 0
    assert wire.anthropic_message(gen, "m", "i", "sig")["content"][0]["type"] == "thinking"
    assert not _gen(_anthropic()).thinking
    ask = wire.openai_ask({"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "high"})
    completion = wire.openai_completion(
        sim.generate(ask, random.Random(1), sim.PrefixCache(), "c"), "m", "c", 1
    )
    assert completion["choices"][0]["message"]["reasoning_content"]
    assert completion["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0


def test_cache_creation_then_cache_reads_for_a_repeated_prefix() -> None:
    system = [{"type": "text", "text": "policy " * 1200, "cache_control": {"type": "ephemeral"}}]
    cache = sim.PrefixCache()
    first = _gen(_anthropic(system=system), cache=cache)
    second = _gen(
        _anthropic(system=system, messages=[{"role": "user", "content": "another question"}]), cache=cache
    )
    assert first.cache_write > 0 and first.cache_read == 0
    assert second.cache_read == first.cache_write and second.cache_write == 0
    short = _gen(
        _anthropic(system=[{"type": "text", "text": "short", "cache_control": {"type": "ephemeral"}}]),
        cache=cache,
    )
    assert short.cache_read == short.cache_write == 0  # below the smallest cacheable prefix
    plain = {"messages": [{"role": "system", "content": "rules " * 1500}, {"role": "user", "content": "q1"}]}
    openai_cache = sim.PrefixCache()
    one = sim.generate(wire.openai_ask(plain), random.Random(1), openai_cache, "c")
    two = sim.generate(
        wire.openai_ask({**plain, "messages": [plain["messages"][0], {"role": "user", "content": "q2"}]}),
        random.Random(1),
        openai_cache,
        "c",
    )
    assert one.cache_read == 0 and two.cache_read >= 1024 and two.cache_read % 128 == 0


def test_output_schema_is_honoured() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "tag": {"enum": ["a", "b"]}},
        "required": ["n", "tag"],
    }
    gen = _gen(_anthropic(output_config={"format": {"type": "json_schema", "schema": schema}}))
    jsonschema.validate(json.loads(gen.text), schema)


def test_a_refused_request_is_a_provider_error() -> None:
    with pytest.raises(SimulatorRequestError, match="max_tokens"):
        wire.anthropic_ask({"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def test_streams_over_http_cut_at_arbitrary_offsets_assemble_to_the_message() -> None:
    with SimulatorServer(seed=3) as server, httpx.Client(trust_env=False) as client:
        body = _anthropic(
            stream=True,
            tools=[{"name": "get_weather", "input_schema": WEATHER}],
            messages=[{"role": "user", "content": "weather in Oslo"}],
        )
        with client.stream("POST", f"{server.url}/v1/messages", json=body) as response:
            pieces = list(response.iter_raw())
        plain = client.post(
            f"{server.url}/compatible-mode/v1/chat/completions",
            json={
                "messages": [{"role": "user", "content": "hi"}],
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        stats = client.get(f"{server.url}/__gc/stats").json()
    assert len(pieces) > 3
    raw = b"".join(pieces).decode()
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    arguments = "".join(
        e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta"
    )
    jsonschema.validate(json.loads(arguments), WEATHER)
    chunks = [line[6:] for line in plain.text.splitlines() if line.startswith("data: ")]
    assert chunks[-1] == "[DONE]" and json.loads(chunks[-2])["choices"] == []
    assert stats["calls"] == {"anthropic": 1, "openai": 1, "gemini": 0, "responses": 0, "other": 0}


def test_a_sentence_comes_before_tools_the_model_chose_itself_but_not_before_a_forced_call() -> None:
    tools = [{"name": "get_weather", "input_schema": WEATHER}]
    ask = [{"role": "user", "content": "What is the weather in Oslo?"}]
    auto = wire.anthropic_message(_gen(_anthropic(tools=tools, messages=ask)), "m", "msg_1", "sig")
    assert [b["type"] for b in auto["content"]] == ["text", "tool_use"] and auto["content"][0]["text"]
    # The argument comes from the conversation, as a model fills in the city it was asked about.
    assert auto["content"][1]["input"]["city"] == "Oslo"
    forced = _gen(_anthropic(tools=tools, messages=ask, tool_choice={"type": "tool", "name": "get_weather"}))
    assert forced.text == "" and [c.name for c in forced.tool_calls] == ["get_weather"]
    completion = wire.openai_completion(
        sim.generate(
            wire.openai_ask(
                {
                    "messages": ask,
                    "tools": [
                        {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
                    ],
                }
            ),
            random.Random(1),
            sim.PrefixCache(),
            "call_",
        ),
        "m",
        "c",
        1,
    )
    message = completion["choices"][0]["message"]
    assert message["content"] and message["tool_calls"][0]["function"]["name"] == "get_weather"


def test_a_prefix_under_the_minimum_is_not_cached() -> None:
    cache = sim.PrefixCache()
    short = [{"type": "text", "text": "policy " * 400, "cache_control": {"type": "ephemeral"}}]  # ~700 tokens
    for _ in range(2):
        gen = _gen(_anthropic(system=short), cache=cache)
        assert (gen.cache_read, gen.cache_write) == (0, 0)
    long = [{"type": "text", "text": "policy " * 800, "cache_control": {"type": "ephemeral"}}]  # ~1,400
    first, second = (_gen(_anthropic(system=long), cache=cache) for _ in range(2))
    assert first.cache_write >= sim.MIN_CACHEABLE_TOKENS and first.cache_read == 0
    assert second.cache_read == first.cache_write and second.cache_write == 0


def test_two_breakpoints_read_the_cached_one_and_write_the_rest() -> None:
    cache = sim.PrefixCache()
    system = [{"type": "text", "text": "policy " * 800, "cache_control": {"type": "ephemeral"}}]
    _gen(_anthropic(system=system), cache=cache)
    appendix = {"type": "text", "text": "appendix " * 300, "cache_control": {"type": "ephemeral"}}
    messages = [{"role": "user", "content": [appendix, {"type": "text", "text": "Which clause?"}]}]
    mixed = _gen(_anthropic(system=system, messages=messages), cache=cache)
    assert mixed.cache_read >= sim.MIN_CACHEABLE_TOKENS and mixed.cache_write > 0 and mixed.input_tokens > 0


def _gemini(**fields: Any) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "hello there"}]}], **fields}


def _gemini_gen(body: dict[str, Any], cache: sim.PrefixCache | None = None) -> sim.Generated:
    return sim.generate(gem.gemini_ask(body), random.Random(1), cache or sim.PrefixCache(), "")


def test_gemini_finish_reasons_function_calls_and_usage_metadata() -> None:
    cut = gem.gemini_response(
        _gemini_gen(_gemini(generationConfig={"maxOutputTokens": 2})),
        "gemini-2.5-flash",
        "r1",
        thoughts=False,
    )
    assert cut["candidates"][0]["finishReason"] == "MAX_TOKENS"
    usage = cut["usageMetadata"]
    assert usage["candidatesTokenCount"] == 2
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
    tools = [{"functionDeclarations": [{"name": "get_weather", "parameters": WEATHER}]}]
    forced = _gemini(tools=tools, toolConfig={"functionCallingConfig": {"mode": "ANY"}})
    answer = gem.gemini_response(_gemini_gen(forced), "m", "r2", thoughts=False)
    (part,) = answer["candidates"][0]["content"]["parts"]
    assert answer["candidates"][0]["finishReason"] == "STOP"  # Gemini has no tool-use finish reason
    assert part["functionCall"]["name"] == "get_weather" and "id" not in part["functionCall"]
    jsonschema.validate(part["functionCall"]["args"], WEATHER)
    none = _gemini(tools=tools, toolConfig={"functionCallingConfig": {"mode": "NONE"}})
    assert _gemini_gen(none).tool_calls == ()
    thinking = _gemini(generationConfig={"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 1024}})
    thought = gem.gemini_response(_gemini_gen(thinking), "m", "r3", thoughts=True)
    parts = thought["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True and thought["usageMetadata"]["thoughtsTokenCount"] > 0
    with pytest.raises(SimulatorRequestError):
        gem.gemini_ask({"contents": []})


def test_gemini_caches_a_long_prompt_implicitly() -> None:
    cache = sim.PrefixCache()
    body = _gemini(systemInstruction={"parts": [{"text": "policy " * 800}]})
    first, second = _gemini_gen(body, cache), _gemini_gen(body, cache)
    assert first.cache_read == 0 and second.cache_read >= sim.GEMINI_MIN_CACHED_TOKENS
    usage = gem.gemini_response(second, "m", "r", thoughts=False)["usageMetadata"]
    assert usage["cachedContentTokenCount"] == second.cache_read <= usage["promptTokenCount"]
    assert _gemini_gen(_gemini(), cache).cache_read == 0  # a short prompt is never cached


def test_gemini_over_http_generate_and_stream() -> None:
    tools = [{"functionDeclarations": [{"name": "get_weather", "parameters": WEATHER}]}]
    body = _gemini(
        contents=[{"role": "user", "parts": [{"text": "What is the weather in Oslo?"}]}], tools=tools
    )
    with SimulatorServer(seed=3) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        plain = client.post("/v1beta/models/gemini-2.5-flash:generateContent", json=body)
        stream = client.post("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", json=body)
        refused = client.post("/v1beta/models/gemini-2.5-flash:generateContent", json={"contents": []})
        stats = client.get("/__gc/stats").json()
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("application/json")
    answer = plain.json()
    assert answer["modelVersion"] == "gemini-2.5-flash"
    kinds = [next(iter(p)) for p in answer["candidates"][0]["content"]["parts"]]
    assert kinds == ["text", "functionCall"]  # automatic choice: a sentence, then the call
    assert stream.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(line[6:]) for line in stream.text.split("\r\n") if line.startswith("data: ")]
    assert events[-1]["candidates"][0]["finishReason"] == "STOP"
    assert all("finishReason" not in e["candidates"][0] for e in events[:-1])
    calls = [p for e in events for p in e["candidates"][0]["content"]["parts"] if "functionCall" in p]
    assert calls[0]["functionCall"]["name"] == "get_weather"
    assert calls[0]["functionCall"]["args"]["city"] == "Oslo"
    assert refused.status_code == 400 and refused.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert stats["calls"]["gemini"] == 3


def test_a_decimal_where_an_integer_belongs_is_refused_like_the_real_apis() -> None:
    """Real providers refuse `seed: 1.2345678901235e+18` (a decimal, however whole): so does the simulator, in
    each family's words, and it accepts the same request with an integer."""
    messages = [{"role": "user", "content": "hi"}]
    with SimulatorServer(seed=3) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        decimal = client.post(
            "/v1/chat/completions", json={"model": "m", "seed": 1.2345678901235e18, "messages": messages}
        )
        whole = client.post(
            "/v1/chat/completions", json={"model": "m", "seed": 1234567890123456789, "messages": messages}
        )
        top_k = client.post(
            "/v1/messages", json={"model": "m", "max_tokens": 16, "top_k": 5.0, "messages": messages}
        )
    assert decimal.status_code == 400
    assert (
        decimal.json()["error"]["param"] == "seed"
        and "expected an integer" in decimal.json()["error"]["message"]
    )
    assert whole.status_code == 200
    assert top_k.status_code == 400 and "top_k" in top_k.json()["error"]["message"]
