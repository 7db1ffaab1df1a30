"""The catalogue of synthesized Anthropic cassettes (cassettes/anthropic/): each scenario's blocks, stop reason
and usage, built with the wire helpers of anthropic.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.cassette.synthesize.anthropic import (
    API_VERSION,
    DATE,
    LONG,
    MODEL,
    URI,
    _rand,
    dumps,
    error_interactions,
    event,
    ok_headers,
    ok_interactions,
    req_id,
    request,
    sse_events,
    text,
    thinking,
    tool,
)
from harness.cassette.synthesize.common import Synthesized


def catalogue() -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    c: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}

    def ok(
        name: str,
        description: str,
        source: str,
        prompt: str,
        blocks_fn: Callable[[str], list[dict[str, Any]]],
        stop: str,
        u: dict[str, Any],
        **extra: Any,
    ) -> None:
        blocks = blocks_fn(name)
        c[name] = (description, source, ok_interactions(name, prompt, blocks, stop, u, **extra))

    ok(
        "text-basic",
        "Plain text answer, stop_reason end_turn.",
        "wire-reference.md §1.6, §1.7",
        "What is a prompt cache?",
        lambda n: [
            text(
                "A prompt cache",
                " stores the processed prefix",
                " of a prompt so later requests",
                " can reuse it.",
            )
        ],
        "end_turn",
        {"input_tokens": 27, "output_tokens": 20},
    )
    ok(
        "stop-sequence",
        'Text that ends on a client stop sequence: stop_reason stop_sequence, stop_sequence "5".',
        "wire-reference.md §1.6, §1.7",
        "Count from 1 to 10.",
        lambda n: [text("1, 2,", " 3, 4, ")],
        "stop_sequence",
        {"input_tokens": 31, "output_tokens": 9},
        req_extra={"stop_sequences": ["5"]},
        stop_sequence="5",
    )
    ok(
        "max-tokens",
        "Text cut at the output limit: stop_reason max_tokens.",
        "wire-reference.md §1.6, §1.7",
        "Tell me the history of caching.",
        lambda n: [text("The history of caching", " begins with the CPU caches", " of the 1960s, when")],
        "max_tokens",
        {"input_tokens": 25, "output_tokens": 16},
    )
    ok(
        "context-window-exceeded",
        "Text cut because the context window is full: stop_reason model_context_window_exceeded.",
        "wire-reference.md §1.6 (StopReason), §1.7",
        "Summarise the whole transcript above.",
        lambda n: [text("The transcript covers", " three meetings; the first")],
        "model_context_window_exceeded",
        {"input_tokens": 199800, "output_tokens": 200},
    )
    ok(
        "tool-use-single",
        "One tool_use block (get_weather, city Oslo) and nothing else: stop_reason tool_use.",
        "wire-reference.md §1.4, §1.6, §1.7 (tool-use fixture)",
        "What's the weather in Oslo? Use the tool.",
        lambda n: [tool(n, 0, "get_weather", '{"city"', ': "Os', 'lo"}')],
        "tool_use",
        {"input_tokens": 377, "output_tokens": 41},
    )
    ok(
        "tool-use-parallel",
        "A text block, then two tool_use blocks (get_weather Oslo, get_time Europe/Paris) at block indexes 1 and 2: "
        "they must become tool-call indexes 0 and 1.",
        "wire-reference.md §1.4, §1.6, §1.7 (tool-use fixture)",
        "Weather in Oslo and the time in Paris, please.",
        lambda n: [
            text("I'll look up", " both for you."),
            tool(n, 0, "get_weather", '{"ci', 'ty": "Oslo"}'),
            tool(n, 1, "get_time", '{"timezone"', ': "Europe/', 'Paris"}'),
        ],
        "tool_use",
        {"input_tokens": 412, "output_tokens": 96},
    )
    ok(
        "text-plus-tool",
        "A text block then one tool_use block at block index 1, as in the SDK's tool-use fixture.",
        "wire-reference.md §1.6, §1.7 (tool-use fixture, verbatim shapes)",
        "What's the weather in Paris?",
        lambda n: [
            text("I", "'ll check the current weather in Paris for you."),
            tool(n, 0, "get_weather", '{"city', '": "P', "ar", 'is"}'),
        ],
        "tool_use",
        {"input_tokens": 377, "output_tokens": 65},
    )
    ok(
        "refusal",
        "The model refuses: stop_reason refusal with stop_details (category cyber).",
        "wire-reference.md §1.6 (stop_details), §1.7 (message_delta.delta.stop_details)",
        "Write ransomware for me.",
        lambda n: [text("I can't help", " with that.")],
        "refusal",
        {"input_tokens": 18, "output_tokens": 7},
        stop_details={
            "type": "refusal",
            "category": "cyber",
            "explanation": "The request asks for malware that would cause harm.",
        },
    )
    ok(
        "pause-turn",
        "A long-running turn paused by the API: stop_reason pause_turn, text so far.",
        "wire-reference.md §1.6 (pause_turn)",
        "Research the topic thoroughly.",
        lambda n: [text("I'm still working", " through the sources.")],
        "pause_turn",
        {"input_tokens": 40, "output_tokens": 12},
    )
    ok(
        "thinking",
        "A thinking block (its text must never reach an OpenAI client) then a text answer; "
        "usage.output_tokens_details.thinking_tokens 142 of output_tokens 180.",
        "wire-reference.md §1.5, §1.6 (Usage.output_tokens_details), §1.7 (thinking block)",
        "Is 1009 prime?",
        lambda n: [
            thinking(
                n,
                "Let me think about 1009.",
                " THINKING-TEXT-q7Zr: check divisors up to 31;",
                " none divides it.",
            ),
            text("Yes, 1009 is", " a prime number."),
        ],
        "end_turn",
        {"input_tokens": 30, "output_tokens": 180, "thinking_tokens": 142},
    )
    ok(
        "cache-read",
        "Text answer whose prompt was mostly read from the prompt cache (cache_read_input_tokens 2048).",
        "wire-reference.md §1.6 (Usage), §1.7 (message_delta usage, cumulative)",
        "And the next turn?",
        lambda n: [text("Here is", " the next turn.")],
        "end_turn",
        {
            "input_tokens": 12,
            "cache_read_input_tokens": 2048,
            "cache_creation_input_tokens": 0,
            "output_tokens": 18,
        },
    )
    ok(
        "cache-write",
        "Text answer whose prompt prefix was written to the prompt cache (cache_creation_input_tokens 1536).",
        "wire-reference.md §1.6 (Usage, cache_creation), §1.7",
        "First turn of a long conversation.",
        lambda n: [text("Understood;", " let's begin.")],
        "end_turn",
        {
            "input_tokens": 14,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 1536,
            "output_tokens": 18,
        },
    )
    ok(
        "unicode-text",
        "Text full of multi-byte UTF-8 (accents, CJK, emoji), for re-chunking at byte offsets.",
        "wire-reference.md §1.7",
        "Greet me in three languages.",
        lambda n: [text("Grüße aus Zürich — ", "こんにちは、世界！", " 🎉🚀 ", "¡Olé! ∑∞≠ 𝄞")],  # noqa: RUF001 (deliberate non-ASCII)
        "end_turn",
        {"input_tokens": 21, "output_tokens": 33},
    )
    ok(
        "long-text",
        "A long text answer in 40 deltas, for pacing and long pauses.",
        "wire-reference.md §1.7",
        "Write forty lines.",
        lambda n: [text(*LONG)],
        "end_turn",
        {"input_tokens": 19, "output_tokens": 720},
    )
    ok(
        "json-answer",
        "A text answer that is JSON matching the schema {city: string, temperature_c: integer}.",
        "wire-reference.md §1.2 (output_config.format), §1.6",
        "Weather in Oslo as JSON.",
        lambda n: [text('{"city":', ' "Oslo", "temperature_c"', ": 9}")],
        "end_turn",
        {"input_tokens": 64, "output_tokens": 14},
        req_extra={
            "output_config": {
                "format": {
                    "type": "json_schema",
                    "schema": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}, "temperature_c": {"type": "integer"}},
                        "required": ["city", "temperature_c"],
                        "additionalProperties": False,
                    },
                }
            }
        },
    )

    # Claude's server-side web search (relay's anthropic_tools): a "let me search" text, the server_tool_use
    # block, its web_search_tool_result, then the cited answer. WEB-ANSWER-k3Vd marks the answer text.
    for name, stop, tail in (
        ("web-search", "end_turn", [" Oslo has about 717,000 people."]),
        ("web-search-paused", "pause_turn", []),
    ):
        srv = "srvtoolu_01" + _rand(name, "srv", 22)
        results = [
            {
                "type": "web_search_result",
                "url": "https://www.ssb.no/en/befolkning",
                "title": "Population - Statistics Norway",
                "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2Q"
                + _rand(name, "enc", 24),
                "page_age": "November 20, 2026",
            },
            {
                "type": "web_search_result",
                "url": "https://en.wikipedia.org/wiki/Oslo",
                "title": "Oslo - Wikipedia",
                "encrypted_content": "EpIHCioIARgBIiRkNGY2MzE3Mi05YzQ0LTRkZWYtYTM2Mi0wNWM0ZGNiNWU3ZGQ"
                + _rand(name, "enc2", 24),
                "page_age": None,
            },
        ]
        citation = {
            "type": "web_search_result_location",
            "url": "https://www.ssb.no/en/befolkning",
            "title": "Population - Statistics Norway",
            "encrypted_index": "Eo8BCioIAhgBIiQ" + _rand(name, "idx", 24),
            "cited_text": "Oslo had 717,710 inhabitants on 1 January 2026.",
        }
        blocks = [
            text("Let me search", " for the current population of Oslo."),
            {
                "type": "server_tool_use",
                "id": srv,
                "name": "web_search",
                "pieces": ['{"query": "Oslo population 2026"}'],
            },
            {"type": "web_search_tool_result", "tool_use_id": srv, "content": results},
        ]
        if tail:
            blocks.append({"type": "text", "pieces": ["WEB-ANSWER-k3Vd:", *tail], "citations": [citation]})
        c[name] = (
            'Server-side web search: a text block, server_tool_use web_search (query "Oslo population 2026"), '
            "web_search_tool_result with two results, "
            + (
                "then a cited text block starting WEB-ANSWER-k3Vd; usage.server_tool_use.web_search_requests 1."
                if tail
                else "then stop_reason pause_turn (the server loop stopped early); web_search_requests 1."
            ),
            "wire-reference.md §1.6 (content blocks, Usage.server_tool_use), §1.7 (citations_delta)",
            ok_interactions(
                name,
                "How many people live in Oslo?",
                blocks,
                stop,
                {"input_tokens": 2113, "output_tokens": 96, "web_search_requests": 1},
                req_extra={"tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]},
            ),
        )

    # A web search that failed (relay "search errors"): the web_search_tool_result carries an error object
    # (§1.6 WebSearchToolResultError) instead of results; the model answers without them.
    name = "web-search-error"
    srv = "srvtoolu_01" + _rand(name, "srv", 22)
    c[name] = (
        'Server-side web search that fails: a text block, server_tool_use web_search (query "Oslo population '
        '2026"), a web_search_tool_result whose content is the error {type: web_search_tool_result_error, '
        "error_code: unavailable}, then a text block starting SEARCH-FAILED-m4Qx; web_search_requests 0.",
        "wire-reference.md §1.6 (content blocks, Usage.server_tool_use)",
        ok_interactions(
            name,
            "How many people live in Oslo?",
            [
                text("Let me search", " for the current population of Oslo."),
                {
                    "type": "server_tool_use",
                    "id": srv,
                    "name": "web_search",
                    "pieces": ['{"query": "Oslo population 2026"}'],
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": srv,
                    "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"},
                },
                text("SEARCH-FAILED-m4Qx:", " the search is unavailable; Oslo had about 700,000 people."),
            ],
            "end_turn",
            {"input_tokens": 2113, "output_tokens": 96, "web_search_requests": 0},
            req_extra={"tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]},
        ),
    )

    # Pairs for comparing X-Relay-Cost-Usd (relay): per stream flag, the first call gets answer A and every
    # later call answer B (the replay serves a flag's interactions in order), so one rule's two requests see
    # two usages. relay-cost-cached: equal prompt totals (2060), B read 2048 of them from the cache.
    # relay-cost-search: identical token usage, B is a web search with one billed search request.
    def pair(
        name: str, prompt: str, a: list[Any], ua: dict[str, int], b: list[Any], ub: dict[str, int]
    ) -> list[Any]:
        first = ok_interactions(name + "-a", prompt, a, "end_turn", ua)
        second = ok_interactions(name + "-b", prompt, b, "end_turn", ub)
        return [first[0], first[1], second[0], second[1]]

    c["relay-cost-cached"] = (
        "Two answers per stream flag, in order: A with 2060 uncached input tokens, then B (every later call) with "
        "12 uncached and 2048 read from the prompt cache; both 18 output tokens.",
        "wire-reference.md §1.6 (Usage), §1.7",
        pair(
            "relay-cost-cached",
            "What is a prompt cache?",
            [text("A prompt cache", " stores a processed prefix.")],
            {"input_tokens": 2060, "output_tokens": 18},
            [text("A prompt cache", " stores a processed prefix.")],
            {"input_tokens": 12, "cache_read_input_tokens": 2048, "output_tokens": 18},
        ),
    )
    srv = "srvtoolu_01" + _rand("relay-cost-search", "srv", 22)
    c["relay-cost-search"] = (
        "Two answers per stream flag, in order: A a plain text answer (2113 input, 96 output tokens), then B "
        "(every later call) a web search answer with the same token usage and web_search_requests 1.",
        "wire-reference.md §1.6 (content blocks, Usage.server_tool_use), §1.7",
        pair(
            "relay-cost-search",
            "How many people live in Oslo?",
            [text("COST-PLAIN-r8Tb:", " Oslo has about 717,000 people.")],
            {"input_tokens": 2113, "output_tokens": 96},
            [
                text("Let me search", " for the current population of Oslo."),
                {
                    "type": "server_tool_use",
                    "id": srv,
                    "name": "web_search",
                    "pieces": ['{"query": "Oslo population 2026"}'],
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": srv,
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://www.ssb.no/en/befolkning",
                            "title": "Population - Statistics Norway",
                            "encrypted_content": "EqgfCioIARgBIiQ" + _rand("relay-cost-search", "enc", 24),
                            "page_age": "November 20, 2026",
                        }
                    ],
                },
                text("COST-SEARCH-r8Tb:", " Oslo has about 717,000 people."),
            ],
            {"input_tokens": 2113, "output_tokens": 96, "web_search_requests": 1},
        ),
    )

    # A stream that fails after HTTP 200 (event: error, §1.7); the non-streaming twin is a 529.
    name = "stream-error-overloaded"
    events = sse_events(
        name,
        [text("The answer", " begins", " here and")],
        "end_turn",
        {"input_tokens": 20, "output_tokens": 9},
    )
    cut = [
        e
        for e in events
        if "message_delta" not in e and "message_stop" not in e and "content_block_stop" not in e
    ]
    cut.append(
        event(
            "error",
            {
                "type": "error",
                "error": {"details": None, "type": "overloaded_error", "message": "Overloaded"},
            },
        )
    )
    inter = error_interactions(name, 529, "overloaded_error", "Overloaded", {"x-should-retry": "true"})
    inter[1] = {
        "request": request(name, stream=True, prompt="[gc] mid-stream failure"),
        "response": {
            "body": {"string": "".join(cut)},
            "headers": ok_headers(name, 1, sse=True),
            "status": {"code": 200, "message": "OK"},
        },
    }
    c[name] = (
        "Streaming: message_start, a text block with three deltas, then `event: error` overloaded_error after "
        "HTTP 200. Non-streaming: HTTP 529 overloaded_error.",
        "wire-reference.md §1.7 (mid-stream error), §1.8",
        inter,
    )

    errors = [
        (
            "error-400",
            400,
            "invalid_request_error",
            "max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-5-5",
            {},
        ),
        ("error-401", 401, "authentication_error", "invalid x-api-key", {}),
        (
            "error-402",
            402,
            "billing_error",
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
            {},
        ),
        (
            "error-403",
            403,
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
            {},
        ),
        ("error-404", 404, "not_found_error", "model: claude-does-not-exist", {}),
        # A prompt over the context window: Anthropic's 400 names the token counts (issue 34's context class).
        (
            "error-prompt-too-long",
            400,
            "invalid_request_error",
            "prompt is too long: 210431 tokens > 200000 maximum",
            {},
        ),
        ("error-413", 413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", {}),
        (
            "error-429",
            429,
            "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50 requests per minute. "
            "For details, refer to: https://docs.claude.com/en/api/rate-limits.",
            {
                "retry-after": "2",
                "x-should-retry": "true",
                "anthropic-ratelimit-requests-limit": "50",
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": "2026-11-29T12:00:02Z",
            },
        ),
        ("error-500", 500, "api_error", "Internal server error", {"x-should-retry": "true"}),
        ("error-504", 504, "timeout_error", "Request timed out", {"x-should-retry": "true"}),
        ("error-529", 529, "overloaded_error", "Overloaded", {"retry-after": "3", "x-should-retry": "true"}),
    ]
    # POST /v1/messages/count_tokens: a Messages body without max_tokens, answered {"input_tokens": N}.
    counted = {
        "model": MODEL,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "Count my tokens."}],
    }
    c["count-tokens"] = (
        "The input token count of a request (system, messages): POST /v1/messages/count_tokens answers "
        '{"input_tokens": 1432}.',
        "wire-reference.md §1.9",
        [
            {
                "request": {
                    **request("count-tokens", stream=False, prompt=""),
                    "body": dumps(counted),
                    "uri": URI + "/count_tokens",
                },
                "response": {
                    "body": {"string": dumps({"input_tokens": 1432})},
                    "headers": {
                        "content-type": ["application/json"],
                        "request-id": [req_id("count-tokens", 0)],
                    },
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
    )
    for name, status, etype, text_, headers in errors:
        c[name] = (
            f"HTTP {status} {etype} for both the non-streaming and the streaming request (the stream never starts).",
            "wire-reference.md §1.8 (envelope, status table)",
            error_interactions(name, status, etype, text_, headers),
        )
    return c


def cassettes() -> list[Synthesized]:
    return [
        Synthesized(
            f"anthropic/{name}",
            {
                "origin": "synthesized",
                "date": DATE,
                "provider": "anthropic",
                "api_version": API_VERSION,
                "model": MODEL,
                "description": description,
                "source": source,
            },
            interactions,
        )
        for name, (description, source, interactions) in catalogue().items()
    ]
