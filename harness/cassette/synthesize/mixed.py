"""The synthesized multi-family cassettes (cassettes/mixed/).

A gateway with a fallback chain across provider families (relay: "fallback along the model's fallback chain")
calls two upstream endpoints for one request. The replay upstream picks a cassette's interactions by endpoint
and stream flag, so one cassette can script both providers: every call to the first family's endpoint fails
(the last interaction repeats, so retries fail too), every call to the second family's endpoint succeeds.
The interactions are built with the family generators (harness/cassette/synthesize/<family>.py);
ids derive from the cassette name, so regenerating gives byte-identical files.
"""

from __future__ import annotations

from typing import Any

from harness.cassette.synthesize import anthropic, anthropic_catalogue, gemini, openai
from harness.cassette.synthesize.common import Synthesized

DATE = "2026-11-29"


def catalogue() -> dict[str, tuple[str, str, str, list[dict[str, Any]]]]:
    """name -> (providers, description, source, interactions)."""
    am, om = anthropic, openai
    c: dict[str, tuple[str, str, str, list[dict[str, Any]]]] = {}
    name = "anthropic-529-then-openai"
    failing = am.error_interactions(name, 529, "overloaded_error", "Overloaded", {"x-should-retry": "true"})
    serving = om.ok_interactions(
        name,
        "gpt-4o-2024-08-06",
        "What is an API gateway?",
        {
            "content": ["FALLBACK-ANSWER-p2Wm:", " an API gateway is", " one entry point for many services."],
            "finish": "stop",
            "usage": om.usage(31, 17),
        },
    )
    c[name] = (
        "anthropic, openai",
        "Fallback across families: every Anthropic Messages call (either stream flag) gets HTTP 529 "
        "overloaded_error; every OpenAI-compatible Chat Completions call gets a text answer starting "
        "FALLBACK-ANSWER-p2Wm (finish_reason stop, usage chunk when streamed).",
        "wire-reference.md §1.8 (529 overloaded_error), §2.3-§2.5 (chat.completion, chunks, usage chunk)",
        [*failing, *serving],
    )
    name = "anthropic-stream-error-then-openai"
    broken = anthropic_catalogue.catalogue()["stream-error-overloaded"][2]
    serving = om.ok_interactions(
        name,
        "gpt-4o-2024-08-06",
        "What is an API gateway?",
        {
            "content": ["FALLBACK-ANSWER-p2Wm:", " an API gateway is", " one entry point for many services."],
            "finish": "stop",
            "usage": om.usage(31, 17),
        },
    )
    c[name] = (
        "anthropic, openai",
        "Anthropic streams three text deltas then fails with `event: error` overloaded_error after HTTP 200 (the "
        "non-streaming call is a 529); an OpenAI-compatible fallback would answer FALLBACK-ANSWER-p2Wm — a "
        "gateway that does not fall back after the first token never reaches it.",
        "wire-reference.md §1.7 (mid-stream error), §1.8, §2.3-§2.5",
        [*broken, *serving],
    )
    # Retry or fallback before the first token, whichever the gateway chooses: the first family's first call
    # per stream flag fails, its later calls succeed, and the next family of the chain (OpenAI-compatible)
    # answers too, so a gateway that retries and one that falls back at once both get an answer.
    am_failing = am.error_interactions(
        "anthropic-529-once-or-openai", 529, "overloaded_error", "Overloaded", {"x-should-retry": "true"}
    )
    am_ok = am.ok_interactions(
        "anthropic-529-once-or-openai",
        "What is an API gateway?",
        [am.text("RETRY-ANSWER-h5Jc:", " an API gateway is", " one entry point for many services.")],
        "end_turn",
        {"input_tokens": 24, "output_tokens": 14},
    )
    name = "anthropic-529-once-or-openai"
    c[name] = (
        "anthropic, openai",
        "Retry or fallback before the first token: per stream flag, the first Anthropic Messages call gets HTTP "
        "529 overloaded_error and every later one a text answer starting RETRY-ANSWER-h5Jc; every "
        "OpenAI-compatible Chat Completions call gets a text answer starting FALLBACK-ANSWER-p2Wm.",
        "wire-reference.md §1.6-§1.8, §2.3-§2.5",
        [am_failing[0], am_ok[0], am_failing[1], am_ok[1], *_fallback(om, name, "gpt-4o-2024-08-06")],
    )
    gm = gemini
    gm_ok = gm.ok_interactions(
        "gemini-503-once-or-openai",
        "What is an API gateway?",
        [gm.text("RETRY-ANSWER-h5Jc:", " an API gateway is", " one entry point for many services.")],
        "STOP",
        {"prompt": 24, "output": 14},
    )
    unavailable = "The model is overloaded. Please try again later."
    name = "gemini-503-once-or-openai"
    c[name] = (
        "gemini, openai",
        "Retry or fallback before the first token: per stream flag, the first Gemini call gets HTTP 503 "
        "UNAVAILABLE and every later one a text answer starting RETRY-ANSWER-h5Jc; every OpenAI-compatible Chat "
        "Completions call gets a text answer starting FALLBACK-ANSWER-p2Wm.",
        "Gemini API generateContent / streamGenerateContent, error envelope; wire-reference.md §2.3-§2.5",
        [
            gm.error_interaction(503, unavailable, stream=False),
            gm_ok[0],
            gm.error_interaction(503, unavailable, stream=True),
            gm_ok[1],
            *_fallback(om, name, "gpt-4o-mini-2024-07-18"),
        ],
    )
    return c


def _fallback(om: Any, name: str, model: str) -> list[dict[str, Any]]:
    return list(
        om.ok_interactions(
            name,
            model,
            "What is an API gateway?",
            {
                "content": [
                    "FALLBACK-ANSWER-p2Wm:",
                    " an API gateway is",
                    " one entry point for many services.",
                ],
                "finish": "stop",
                "usage": om.usage(31, 17),
            },
        )
    )


def cassettes() -> list[Synthesized]:
    return [
        Synthesized(
            f"mixed/{name}",
            {
                "origin": "synthesized",
                "date": DATE,
                "provider": providers,
                "description": description,
                "source": source,
            },
            interactions,
        )
        for name, (providers, description, source, interactions) in catalogue().items()
    ]
