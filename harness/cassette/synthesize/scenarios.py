"""Each cassette's `scenario` block (written with the cassette by `python -m harness.cassette.synthesize`).

The scenario says what the cassette exists to show (the properties `record` checks in every new recording),
the request that provokes it on a real provider, or why no request can (specs/README.md, "Cassettes"). The
properties are the ones the rules using the cassette rely on: its stop reason, its content kinds in order, the
tool names and argument shape, thinking, cache reads or writes, an error's status and type.

"""

from __future__ import annotations

from typing import Any

CLAUDE = "claude-sonnet-5-5"
GPT = "gpt-5.5"

WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
TIME = {
    "name": "get_time",
    "description": "Current local time in an IANA time zone",
    "input_schema": {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    },
}
WEATHER_ARGS = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}
TIME_ARGS = {"type": "object", "required": ["timezone"], "properties": {"timezone": {"type": "string"}}}


def city(name: str) -> dict[str, Any]:
    """The arguments a model gives a weather call for the city the prompt names (rules check the city)."""
    return {"type": "object", "required": ["city"], "properties": {"city": {"const": name}}}


ZONE = {"type": "object", "required": ["timezone"], "properties": {"timezone": {"const": "Europe/Paris"}}}
JSON_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temperature_c": {"type": "integer"}},
    "required": ["city", "temperature_c"],
    "additionalProperties": False,
}
# About 1,500 tokens: above every family's minimum cacheable prompt (1,024 tokens). `${nonce}` makes each
# recording's prefix new, so a write is a write (a provider keeps a cached prefix for minutes).
_CLAUSE = (
    "Clause {n}. Travel requests are approved by the team lead, booked through the travel desk, and reimbursed "
    "within thirty days of the receipt being filed with finance. "
)
POLICY = "Company travel policy, revision ${nonce}. " + "".join(_CLAUSE.format(n=n) for n in range(1, 41))
APPENDIX = "Appendix ${nonce}: expense categories. " + "".join(
    f"Category {n} covers meals, lodging and ground transport for trips that last {n} days or longer. "
    for n in range(1, 61)
)
COUNT = "Count from 1 to 300, separated by commas, and write nothing else."
UNICODE = "Repeat exactly, and nothing else: Grüße aus Zürich — 日本語のテキスト 🌍🚀 ça va, naïve café?"


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def claude(messages: Any, max_tokens: int = 256, **extra: Any) -> dict[str, Any]:
    return {"model": CLAUDE, "max_tokens": max_tokens, "messages": messages, **extra}


def gpt(messages: Any, model: str = GPT, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": messages, **extra}


def responses(text: str, model: str = GPT, **extra: Any) -> dict[str, Any]:
    return {"model": model, "input": text, **extra}


def gemini(text: str, **extra: Any) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": text}]}], **extra}


def not_recordable(why: str, **expect: Any) -> dict[str, Any]:
    return {"recordable": False, "why": why, "expect": expect}


def recordable(request: dict[str, Any], prime: Any = None, **expect: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"recordable": True, "request": request}
    if prime is not None:
        out["prime"] = prime
    out["expect"] = expect
    return out


HTTP_FAULT = "an HTTP {status} {kind} comes from the provider's own state (load, limits, account); no request provokes it on demand"
MID_STREAM = (
    "a stream that fails after it started comes from the provider's load; no request provokes it on demand"
)
FALLBACK = (
    "a fallback chain needs its first answer to fail (HTTP {status}), which no request provokes on demand"
)
REFUSAL = (
    "a refusal comes from the provider's safety classifiers: no request provokes it reliably, and the suite does "
    "not ask a model for harmful output"
)
PAUSE = (
    "the API pauses a long-running server-tool turn at its own discretion; no request provokes it on demand"
)
WINDOW = (
    "needs a prompt that fills the model's context window (about 200,000 tokens): too costly for a refresh"
)
FILTER = "the provider's content filter decides by itself; no request provokes it reliably"


def _errors(provider: str, table: dict[str, tuple[int, str]]) -> dict[str, Any]:
    return {
        f"{provider}/{name}": not_recordable(
            HTTP_FAULT.format(status=status, kind=kind), status=status, error_type=kind
        )
        for name, (status, kind) in table.items()
    }


OPENAI_WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_weather", "description": WEATHER["description"], "parameters": WEATHER_ARGS},
}
OPENAI_TIME: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_time", "description": TIME["description"], "parameters": TIME_ARGS},
}
# The Responses API's function tools are flat (no `function` wrapper).
RESPONSES_WEATHER = {"type": "function", **OPENAI_WEATHER["function"]}
RESPONSES_TIME = {"type": "function", **OPENAI_TIME["function"]}
GEMINI_TOOLS = [
    {
        "functionDeclarations": [
            {"name": "get_weather", "description": WEATHER["description"], "parameters": WEATHER_ARGS},
            {"name": "get_time", "description": TIME["description"], "parameters": TIME_ARGS},
        ]
    }
]
CACHED_SYSTEM = [{"type": "text", "text": POLICY, "cache_control": {"type": "ephemeral"}}]

SCENARIOS: dict[str, dict[str, Any]] = {
    # --- Anthropic -----------------------------------------------------------------------------------
    "anthropic/text-basic": recordable(
        claude(user("Say hello in one short sentence.")), stop_reason="end_turn", blocks=["text"]
    ),
    "anthropic/long-text": recordable(
        claude(user(COUNT), max_tokens=2048),
        stop_reason="end_turn",
        blocks=["text"],
        text={"min_length": 400},
        text_deltas={"min": 20},
    ),
    "anthropic/unicode-text": recordable(
        claude(user(UNICODE)),
        stop_reason="end_turn",
        blocks=["text"],
        # Two-, three- and four-byte UTF-8 (accents, CJK, emoji): re-chunking cuts inside each.
        text={"matches": "[\u0080-\u07ff].*[\u0800-\uffff].*[\U00010000-\U0010ffff]"},
    ),
    "anthropic/max-tokens": recordable(
        claude(user("Write a long story about a lighthouse keeper."), max_tokens=8),
        stop_reason="max_tokens",
        blocks=["text"],
    ),
    "anthropic/stop-sequence": recordable(
        claude(user("Count from 1 to 10, separated by commas."), stop_sequences=["5"]),
        stop_reason="stop_sequence",
        stop_sequence="5",
        blocks=["text"],
    ),
    "anthropic/tool-use-single": recordable(
        claude(
            user("What is the weather in Oslo?"),
            tools=[WEATHER],
            tool_choice={"type": "tool", "name": "get_weather"},
        ),
        stop_reason="tool_use",
        blocks=["tool_use(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "anthropic/count-tokens": not_recordable(
        "the recorder drives POST /v1/messages; a count_tokens answer is one number, synthesized from the API reference",
        status=200,
    ),
    "anthropic/text-plus-tool": recordable(
        claude(
            user("What is the weather in Paris? Check it with the weather tool."),
            tools=[WEATHER],
            tool_choice={"type": "auto"},
        ),
        stop_reason="tool_use",
        blocks=["text", "tool_use(get_weather)"],
        tool_arguments={"get_weather": city("Paris")},
    ),
    "anthropic/tool-use-parallel": recordable(
        claude(
            user("What is the weather in Oslo and the local time in Europe/Paris? Use both tools at once."),
            tools=[WEATHER, TIME],
            tool_choice={"type": "auto"},
        ),
        stop_reason="tool_use",
        blocks=["text", "tool_use(get_weather)", "tool_use(get_time)"],
        tool_arguments={"get_weather": city("Oslo"), "get_time": ZONE},
    ),
    "anthropic/thinking": recordable(
        claude(
            user("What is 17 times 23? Think it through."),
            max_tokens=2048,
            thinking={"type": "enabled", "budget_tokens": 1024},
        ),
        stop_reason="end_turn",
        blocks=["thinking", "text"],
        thinking=True,
    ),
    "anthropic/json-answer": recordable(
        claude(
            user("Give the current weather in Oslo as JSON."),
            output_config={"format": {"type": "json_schema", "schema": JSON_SCHEMA}},
        ),
        stop_reason="end_turn",
        blocks=["text"],
        text={"schema": JSON_SCHEMA},
    ),
    "anthropic/cache-write": recordable(
        claude(user("Summarise the travel policy in one sentence."), system=CACHED_SYSTEM),
        stop_reason="end_turn",
        blocks=["text"],
        usage={"cache_creation_input_tokens": {"min": 1024}, "cache_read_input_tokens": 0},
    ),
    "anthropic/cache-read": recordable(
        claude(user("Summarise the travel policy in one sentence."), system=CACHED_SYSTEM),
        prime=True,  # the first send writes the prefix; the recorded one reads it
        stop_reason="end_turn",
        blocks=["text"],
        usage={"cache_read_input_tokens": {"min": 1024}},
    ),
    "anthropic/lyrouter-cache-mixed": recordable(
        claude(
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": APPENDIX, "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": "Which category covers a two-day trip?"},
                    ],
                }
            ],
            system=CACHED_SYSTEM,
        ),
        # The system prompt alone is cached first; the recording reads it and writes the appendix after it.
        prime=claude(user("Say ok."), max_tokens=16, system=CACHED_SYSTEM),
        stop_reason="end_turn",
        blocks=["text"],
        usage={
            "cache_read_input_tokens": {"min": 1024},
            "cache_creation_input_tokens": {"min": 1},
            "input_tokens": {"min": 1},
        },
    ),
    "anthropic/lyrouter-model-alias": recordable(
        # An alias without a date: the API answers with the dated model id it resolved it to.
        claude(user("Say hello in one short sentence.")),
        stop_reason="end_turn",
        blocks=["text"],
        model={"matches": r"-\d{8}$"},
    ),
    "anthropic/web-search": recordable(
        claude(
            user("What is the population of Oslo in 2025? Search the web once."),
            max_tokens=1024,
            tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
        ),
        stop_reason="end_turn",
        blocks=["text", "server_tool_use(web_search)", "web_search_tool_result", "text"],
    ),
    "anthropic/web-search-error": not_recordable(
        "a web search whose result is an error comes from the search backend's state; no request provokes it",
        stop_reason="end_turn",
        blocks=["text", "server_tool_use(web_search)", "web_search_tool_result", "text"],
    ),
    "anthropic/relay-cost-cached": not_recordable(
        "two answers whose token totals are equal by construction, one mostly read from the cache: a provider's "
        "counts are its own, no pair of requests reproduces them",
        stop_reason="end_turn",
        blocks=["text"],
    ),
    "anthropic/relay-cost-search": not_recordable(
        "two answers of identical usage, one with a web search: a provider's counts differ between any two calls",
        stop_reason="end_turn",
    ),
    "anthropic/web-search-paused": not_recordable(
        PAUSE,
        stop_reason="pause_turn",
        blocks=["text", "server_tool_use(web_search)", "web_search_tool_result"],
    ),
    "anthropic/pause-turn": not_recordable(PAUSE, stop_reason="pause_turn"),
    "anthropic/refusal": not_recordable(REFUSAL, stop_reason="refusal"),
    "anthropic/context-window-exceeded": not_recordable(WINDOW, stop_reason="model_context_window_exceeded"),
    "anthropic/stream-error-overloaded": not_recordable(
        MID_STREAM, status=529, error_type="overloaded_error"
    ),
    "anthropic/lyrouter-fallback-500": not_recordable(FALLBACK.format(status=500), status=500),
    "anthropic/lyrouter-fallback-529": not_recordable(FALLBACK.format(status=529), status=529),
    **_errors(
        "anthropic",
        {
            "error-400": (400, "invalid_request_error"),
            "error-401": (401, "authentication_error"),
            "error-402": (402, "billing_error"),
            "error-403": (403, "permission_error"),
            "error-404": (404, "not_found_error"),
            "error-prompt-too-long": (400, "invalid_request_error"),
            "error-413": (413, "request_too_large"),
            "error-429": (429, "rate_limit_error"),
            "error-500": (500, "api_error"),
            "error-504": (504, "timeout_error"),
            "error-529": (529, "overloaded_error"),
        },
    ),
    # --- OpenAI-compatible ---------------------------------------------------------------------------
    "openai/text-basic": recordable(
        gpt(user("Say hello in one short sentence.")), stop_reason="stop", blocks=["text"]
    ),
    "openai/long-text": recordable(
        gpt(user(COUNT)),
        stop_reason="stop",
        blocks=["text"],
        text={"min_length": 400},
        text_deltas={"min": 20},
    ),
    "openai/length": recordable(
        gpt(user("Write a long story about a lighthouse keeper."), max_completion_tokens=8),
        stop_reason="length",
        blocks=["text"],
    ),
    "openai/tool-call": recordable(
        # `required` (not a named function): OpenAI ends a call forced by name with finish_reason stop.
        gpt(user("What is the weather in Oslo?"), tools=[OPENAI_WEATHER], tool_choice="required"),
        stop_reason="tool_calls",
        blocks=["tool_call(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "openai/reasoning-content": recordable(
        # DeepSeek's shape: reasoning_content and its own cache counters (rules read prompt_cache_hit_tokens).
        gpt(
            user("What is 17 times 23? Think it through."), model="deepseek-reasoner", reasoning_effort="high"
        ),
        stop_reason="stop",
        blocks=["reasoning", "text"],
        fields=["reasoning_content"],
        usage_fields=["prompt_cache_hit_tokens", "prompt_cache_miss_tokens"],
        thinking=True,
    ),
    "openai/reasoning-field": recordable(
        # A provider that names the thinking `reasoning` (Kimi, OpenRouter): only such a provider reproduces it.
        gpt(user("What is 17 times 23? Think it through."), model="kimi-k2", reasoning_effort="high"),
        stop_reason="stop",
        blocks=["reasoning", "text"],
        fields=["reasoning"],
        thinking=True,
    ),
    "openai/content-filter": not_recordable(FILTER, stop_reason="content_filter"),
    "openai/text-three-deltas": not_recordable(
        "its rule checks each of three known text deltas arrives; where a provider cuts its stream is its own",
        stop_reason="stop",
        blocks=["text"],
        text_deltas={"equals": 3},
    ),
    "openai/unicode-text": recordable(
        gpt(user(UNICODE)),
        stop_reason="stop",
        blocks=["text"],
        text={"matches": "[\u0080-\u07ff].*[\u0800-\uffff].*[\U00010000-\U0010ffff]"},
    ),
    "openai/text-plus-tool": recordable(
        # Under `auto` a real model often writes a sentence before its call: the scenario asks it to.
        gpt(
            user("First say in one sentence that you will look it up, then call get_weather for Oslo."),
            tools=[OPENAI_WEATHER],
            tool_choice="auto",
        ),
        stop_reason="tool_calls",
        blocks=["text", "tool_call(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "openai/tool-call-parallel": recordable(
        gpt(
            user("What is the weather in Oslo and the local time in Europe/Paris? Use both tools at once."),
            tools=[OPENAI_WEATHER, OPENAI_TIME],
            tool_choice="required",
            parallel_tool_calls=True,
        ),
        stop_reason="tool_calls",
        blocks=["tool_call(get_weather)", "tool_call(get_time)"],
        tool_arguments={"get_weather": city("Oslo"), "get_time": ZONE},
    ),
    "openai/text-plus-parallel": recordable(
        # A sentence first, then both calls: the indexes must still count the calls from 0 (audit D19).
        gpt(
            user(
                "First say in one sentence that you will look both up, then call get_weather for Oslo and "
                "get_time for Europe/Paris at once."
            ),
            tools=[OPENAI_WEATHER, OPENAI_TIME],
            tool_choice="auto",
            parallel_tool_calls=True,
        ),
        stop_reason="tool_calls",
        blocks=["text", "tool_call(get_weather)", "tool_call(get_time)"],
        tool_arguments={"get_weather": city("Oslo"), "get_time": ZONE},
    ),
    "openai/n-two": recordable(
        gpt(user("Say hello in one short sentence."), n=2),
        stop_reason="stop,stop",  # one finish per choice
        blocks=["text"],
    ),
    "openai/logprobs": recordable(
        gpt(user("Say hello in one short sentence."), logprobs=True, top_logprobs=2),
        stop_reason="stop",
        blocks=["text"],
        logprobs=True,
    ),
    **_errors(
        "openai",
        {
            "error-400": (400, "invalid_request_error"),
            "error-404": (404, "invalid_request_error"),
            "error-context-length": (400, "invalid_request_error"),
            "error-429": (429, "tokens"),
            "error-500": (500, "server_error"),
        },
    ),
    # --- OpenAI Responses (POST /v1/responses) ---------------------------------------------------------
    "responses/text-basic": recordable(
        responses("Say hello in one short sentence."), stop_reason="completed", blocks=["message"]
    ),
    "responses/long-text": recordable(
        responses(COUNT),
        stop_reason="completed",
        blocks=["message"],
        text={"min_length": 400},
        text_deltas={"min": 20},
    ),
    "responses/length": recordable(
        # 16 is the least max_output_tokens the API takes.
        responses("Write a long story about a lighthouse keeper.", max_output_tokens=16),
        stop_reason="incomplete:max_output_tokens",
        blocks=["message"],
    ),
    "responses/unicode-text": recordable(
        responses(UNICODE),
        stop_reason="completed",
        blocks=["message"],
        text={"matches": "[\u0080-\u07ff].*[\u0800-\uffff].*[\U00010000-\U0010ffff]"},
    ),
    "responses/content-filter": not_recordable(FILTER, stop_reason="incomplete:content_filter"),
    "responses/tool-call": recordable(
        responses("What is the weather in Oslo?", tools=[RESPONSES_WEATHER], tool_choice="required"),
        stop_reason="completed",
        blocks=["function_call(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "responses/tool-call-parallel": recordable(
        responses(
            "What is the weather in Oslo and the local time in Europe/Paris? Use both tools at once.",
            tools=[RESPONSES_WEATHER, RESPONSES_TIME],
            tool_choice="required",
            parallel_tool_calls=True,
        ),
        stop_reason="completed",
        blocks=["function_call(get_weather)", "function_call(get_time)"],
        tool_arguments={"get_weather": city("Oslo"), "get_time": ZONE},
    ),
    "responses/text-plus-tool": recordable(
        responses(
            "First say in one sentence that you will look it up, then call get_weather for Oslo.",
            tools=[RESPONSES_WEATHER],
            tool_choice="auto",
        ),
        stop_reason="completed",
        blocks=["message", "function_call(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "responses/reasoning-content": recordable(
        # A reasoning summary is returned only when asked for; encrypted_content only with `include` (and
        # store false: the item a stateless client sends back).
        responses(
            "What is 17 times 23? Think it through.",
            reasoning={"effort": "high", "summary": "auto"},
            include=["reasoning.encrypted_content"],
            store=False,
        ),
        stop_reason="completed",
        blocks=["reasoning", "message"],
        thinking=True,
    ),
    **_errors(
        "responses",
        {
            "error-400": (400, "invalid_request_error"),
            "error-404": (404, "invalid_request_error"),
            "error-context-length": (400, "invalid_request_error"),
            "error-429": (429, "tokens"),
            "error-500": (500, "server_error"),
        },
    ),
    # --- Gemini ----------------------------------------------------------------------------------------
    "gemini/text-basic": recordable(
        gemini("Say hello in one short sentence."), stop_reason="STOP", blocks=["text"]
    ),
    "gemini/long-text": recordable(
        gemini(COUNT), stop_reason="STOP", blocks=["text"], text={"min_length": 400}, text_deltas={"min": 20}
    ),
    "gemini/max-tokens": recordable(
        gemini("Write a long story about a lighthouse keeper.", generationConfig={"maxOutputTokens": 8}),
        stop_reason="MAX_TOKENS",
        blocks=["text"],
    ),
    "gemini/unicode-text": recordable(
        gemini(UNICODE),
        stop_reason="STOP",
        blocks=["text"],
        text={"matches": "[\u0080-\u07ff].*[\u0800-\uffff].*[\U00010000-\U0010ffff]"},
    ),
    "gemini/text-plus-tool": recordable(
        # As for openai/text-plus-tool: the scenario asks for the sentence a real model often writes first.
        gemini(
            "First say in one sentence that you will look it up, then call get_weather for Oslo.",
            tools=GEMINI_TOOLS,
        ),
        stop_reason="STOP",
        blocks=["text", "functionCall(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "gemini/tool-call": recordable(
        gemini(
            "What is the weather in Oslo?",
            tools=GEMINI_TOOLS,
            toolConfig={"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
        ),
        stop_reason="STOP",
        blocks=["functionCall(get_weather)"],
        tool_arguments={"get_weather": city("Oslo")},
    ),
    "gemini/tool-call-parallel": recordable(
        gemini(
            "What is the weather in Oslo and the local time in Europe/Paris? Use both tools at once.",
            tools=GEMINI_TOOLS,
        ),
        stop_reason="STOP",
        blocks=["text", "functionCall(get_weather)", "functionCall(get_time)"],
        tool_arguments={"get_weather": city("Oslo"), "get_time": ZONE},
    ),
    "gemini/cache-read": recordable(
        # Implicit caching: a long prompt sent twice is read from the cache the second time.
        gemini(
            "Summarise the travel policy in one sentence.", systemInstruction={"parts": [{"text": POLICY}]}
        ),
        prime=True,
        stop_reason="STOP",
        blocks=["text"],
        usage={"cache_read_input_tokens": {"min": 1024}},
    ),
    # --- Fallback chains across families ------------------------------------------------------------------
    "mixed/anthropic-529-then-openai": not_recordable(FALLBACK.format(status=529), status=529),
    "mixed/anthropic-529-once-or-openai": not_recordable(FALLBACK.format(status=529), status=529),
    "mixed/gemini-503-once-or-openai": not_recordable(FALLBACK.format(status=503), status=503),
    "mixed/anthropic-stream-error-then-openai": not_recordable(
        MID_STREAM, status=529, error_type="overloaded_error"
    ),
    "gemini/fallback-503": not_recordable(FALLBACK.format(status=503), status=503),
    "gemini/safety": not_recordable(FILTER, stop_reason="SAFETY"),
    **_errors(
        "gemini",
        {
            "error-400": (400, "INVALID_ARGUMENT"),
            "error-404": (404, "NOT_FOUND"),
            "error-token-limit": (400, "INVALID_ARGUMENT"),
            "error-429": (429, "RESOURCE_EXHAUSTED"),
            "error-503": (503, "UNAVAILABLE"),
        },
    ),
}

# What a gateway adds (rate-limit 429s, usage with both cache tiers): their scenarios live with their generator.
from harness.cassette.synthesize.features import SCENARIOS as _FEATURE_SCENARIOS  # noqa: E402

SCENARIOS.update(_FEATURE_SCENARIOS)

# Codex's round trips (a custom tool's call, reasoning across a tool turn): their scenarios live with their generator.
from harness.cassette.synthesize.codex import SCENARIOS as _CODEX_SCENARIOS  # noqa: E402

SCENARIOS.update(_CODEX_SCENARIOS)
