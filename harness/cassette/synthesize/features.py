"""The cassettes of what a gateway adds (specs/features/gateway-features.md): each provider's 429 with the
rate-limit headers its API reference documents, and an answer whose usage has both cache tiers and reasoning
tokens, for the cost rules. Built with the family generators; ids derive from the names, so regenerating gives
byte-identical files. Their scenario blocks are here too (SCENARIOS, merged into scenarios.py's).

Fallback needs no cassette of its own: the rules fail the case's first deployment with a replay fault
(`first_deployment_only`) and serve the fallback from the family's ordinary answer.
"""

from __future__ import annotations

from typing import Any

from harness.cassette.synthesize import anthropic, gemini, openai, responses
from harness.cassette.synthesize.common import Synthesized, ok_pair

DATE = "2026-12-08"
RESET = "2026-11-29T12:00:07Z"
# Anthropic API reference, "Rate limits" (response headers): the requests, tokens, input-tokens and output-tokens
# limits, each with its remaining count and RFC 3339 reset time, and retry-after on a 429.
ANTHROPIC_LIMITS = {
    "retry-after": "7",
    "x-should-retry": "true",
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": "0",
    "anthropic-ratelimit-requests-reset": RESET,
    "anthropic-ratelimit-tokens-limit": "90000",
    "anthropic-ratelimit-tokens-remaining": "88750",
    "anthropic-ratelimit-tokens-reset": RESET,
    "anthropic-ratelimit-input-tokens-limit": "80000",
    "anthropic-ratelimit-input-tokens-remaining": "78750",
    "anthropic-ratelimit-input-tokens-reset": RESET,
    "anthropic-ratelimit-output-tokens-limit": "10000",
    "anthropic-ratelimit-output-tokens-remaining": "10000",
    "anthropic-ratelimit-output-tokens-reset": RESET,
}
# OpenAI API reference, "Rate limits" (headers): limit, remaining and reset (a duration) for requests and tokens;
# the 429 also carries retry-after.
OPENAI_LIMITS = {
    "retry-after": "7",
    "x-ratelimit-limit-requests": "10000",
    "x-ratelimit-limit-tokens": "30000000",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-remaining-tokens": "29998750",
    "x-ratelimit-reset-requests": "7s",
    "x-ratelimit-reset-tokens": "2ms",
}
OPENAI_429 = {
    "message": "Rate limit reached for gpt-5.5 on requests per min (RPM): Limit 10000, Used 10000, Requested 1. "
    "Please try again in 7s.",
    "type": "requests",
    "param": None,
    "code": "rate_limit_exceeded",
}
COST_PROMPT = "What does a gateway bill for this answer?"
COST_TEXT = ("COST-ANSWER-v7Qe:", " every token class", " has its price.")
# One answer's usage, every class several percent of its cost at any sensible price table (a gateway that prices
# one of them at another class's rate, or not at all, is off by more than the rules' 0.1%): 1,800 fresh input
# tokens, 60,000 read from the cache and 12,000 written to it, 2,400 output tokens of which 1,600 reasoning.
FRESH, CACHE_READ, CACHE_WRITE, OUTPUT, REASONING = 1800, 60000, 12000, 2400, 1600


def catalogue() -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    """name -> (description, source, interactions)."""
    c: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}
    name = "anthropic/error-429-rate-limits"
    c[name] = (
        "HTTP 429 rate_limit_error for both stream flags with every rate-limit header the API documents "
        "(requests, tokens, input and output tokens: limit, remaining, reset), retry-after 7 and x-should-retry.",
        "Anthropic API reference: Rate limits (response headers), Errors (429 rate_limit_error)",
        anthropic.error_interactions(
            name,
            429,
            "rate_limit_error",
            "This request would exceed the rate limit for your organization of 50 requests per minute. For "
            "details, refer to: https://docs.claude.com/en/api/rate-limits.",
            ANTHROPIC_LIMITS,
        ),
    )
    name = "openai/error-429-rate-limits"
    c[name] = (
        "HTTP 429 rate_limit_exceeded (requests per minute) for both stream flags with the six x-ratelimit-* "
        "headers the API documents and retry-after 7.",
        "OpenAI API reference: Rate limits (rate limits in headers), Error codes (429)",
        openai.error_interactions(name, "gpt-5.5", 429, OPENAI_429, OPENAI_LIMITS),
    )
    name = "responses/error-429-rate-limits"
    c[name] = (
        "The Responses form of openai/error-429-rate-limits: the same 429 envelope and headers on /v1/responses.",
        "OpenAI API reference: Rate limits (rate limits in headers), Responses (errors)",
        [
            {
                **it,
                "request": responses.request("gpt-5.5", stream=stream, prompt="[gc] error case"),
            }
            for it, stream in zip(
                openai.error_interactions(name, "gpt-5.5", 429, OPENAI_429, OPENAI_LIMITS),
                (False, True),
                strict=True,
            )
        ],
    )
    name = "anthropic/usage-cache-tiers"
    c[name] = (
        "A text answer (end_turn) starting COST-ANSWER-v7Qe whose usage has fresh input, cache reads and cache "
        "writes: input_tokens 1800, cache_read_input_tokens 60000, cache_creation_input_tokens 12000, output_tokens "
        "2400.",
        "Anthropic API reference: Messages (usage), Prompt caching (pricing of cache reads and writes)",
        anthropic.ok_interactions(
            name,
            COST_PROMPT,
            [anthropic.text(*COST_TEXT)],
            "end_turn",
            {
                "input_tokens": FRESH,
                "cache_read_input_tokens": CACHE_READ,
                "cache_creation_input_tokens": CACHE_WRITE,
                "output_tokens": OUTPUT,
            },
        ),
    )
    answer = {
        "content": list(COST_TEXT),
        "finish": "stop",
        "usage": openai.usage(
            FRESH + CACHE_READ + CACHE_WRITE, OUTPUT, cached=CACHE_READ, reasoning=REASONING
        ),
    }
    name = "openai/usage-cache-tiers"
    c[name] = (
        "A text answer (stop) starting COST-ANSWER-v7Qe whose usage has cached prompt tokens and reasoning "
        "tokens: prompt_tokens 73800 (cached_tokens 60000), completion_tokens 2400 (reasoning_tokens 1600); the "
        "usage chunk when streamed.",
        "OpenAI API reference: Chat Completions (usage: prompt_tokens_details, completion_tokens_details)",
        openai.ok_interactions(name, "gpt-5.5", COST_PROMPT, answer),
    )
    name = "responses/usage-cache-tiers"
    c[name] = (
        "The Responses form of openai/usage-cache-tiers: input_tokens 73800 (cached_tokens 60000), output_tokens "
        "2400 (reasoning_tokens 1600).",
        "OpenAI API reference: Responses (usage: input_tokens_details, output_tokens_details)",
        ok_pair(
            (
                responses.request("gpt-5.5", stream=False, prompt=COST_PROMPT),
                responses.request("gpt-5.5", stream=True, prompt=COST_PROMPT),
            ),
            (
                openai.dumps(responses.response(name, "gpt-5.5", answer)),
                responses.sse(responses.events(name, "gpt-5.5", answer)),
            ),
            (
                openai.headers(name, 0, sse=False),
                openai.headers(name, 1, sse=True),
            ),
        ),
    )
    name = "gemini/usage-cache-tiers"
    c[name] = (
        "A text answer (STOP) starting COST-ANSWER-v7Qe whose usageMetadata has cached content and thoughts: "
        "promptTokenCount 73800 (cachedContentTokenCount 60000), candidatesTokenCount 800, thoughtsTokenCount "
        "1600 (billed as output beside the candidates).",
        "Gemini API reference: generateContent (UsageMetadata), Pricing (output price includes thinking tokens)",
        gemini.ok_interactions(
            name,
            COST_PROMPT,
            [gemini.text(*COST_TEXT)],
            "STOP",
            {
                "prompt": FRESH + CACHE_READ + CACHE_WRITE,
                "output": OUTPUT - REASONING,
                "cached": CACHE_READ,
                "thoughts": REASONING,
            },
        ),
    )
    return c


_RATE_LIMITED = (
    "a 429 with the provider's rate-limit headers comes from its own state (an organization over its limits); no "
    "request provokes it on demand"
)
_BOTH_TIERS = (
    "one answer that reads one cached prefix and writes another, with reasoning tokens, in the proportions that "
    "keep every token class several percent of its cost: a recording's counts would be whatever the provider "
    "decides"
)
USAGE = {
    "cache_read_input_tokens": {"equals": CACHE_READ},
    "output_tokens": {"equals": OUTPUT},
}
SCENARIOS: dict[str, dict[str, Any]] = {
    "anthropic/error-429-rate-limits": {
        "recordable": False,
        "why": _RATE_LIMITED,
        "expect": {"status": 429, "error_type": "rate_limit_error"},
    },
    "openai/error-429-rate-limits": {
        "recordable": False,
        "why": _RATE_LIMITED,
        "expect": {"status": 429, "error_type": "requests"},
    },
    "responses/error-429-rate-limits": {
        "recordable": False,
        "why": _RATE_LIMITED,
        "expect": {"status": 429, "error_type": "requests"},
    },
    "anthropic/usage-cache-tiers": {
        "recordable": False,
        "why": _BOTH_TIERS,
        "expect": {
            "stop_reason": "end_turn",
            "blocks": ["text"],
            "usage": {**USAGE, "cache_creation_input_tokens": {"equals": CACHE_WRITE}},
        },
    },
    "openai/usage-cache-tiers": {
        "recordable": False,
        "why": _BOTH_TIERS,
        "expect": {
            "stop_reason": "stop",
            "blocks": ["text"],
            "usage": {**USAGE, "thinking_tokens": {"equals": REASONING}},
        },
    },
    "responses/usage-cache-tiers": {
        "recordable": False,
        "why": _BOTH_TIERS,
        "expect": {"usage": {**USAGE, "thinking_tokens": {"equals": REASONING}}},
    },
    "gemini/usage-cache-tiers": {
        "recordable": False,
        "why": _BOTH_TIERS,
        "expect": {
            "stop_reason": "STOP",
            "blocks": ["text"],
            "usage": {**USAGE, "thinking_tokens": {"equals": REASONING}},
        },
    },
}


def cassettes() -> list[Synthesized]:
    return [
        Synthesized(
            name,
            {
                "origin": "synthesized",
                "date": DATE,
                "provider": name.split("/")[0],
                **({"model": "gpt-5.5"} if name.startswith(("openai/", "responses/")) else {}),
                "description": description,
                "source": source,
            },
            interactions,
        )
        for name, (description, source, interactions) in catalogue().items()
    ]
