"""The client scenarios' provider scripts (cassettes/clients/anthropic/; the other families' are
clients_families.py's).

Anthropic-shaped answers (the provider behind each profile's client model role), built with the helpers of
harness/cassette/synthesize/anthropic.py from the documented wire format (wire-reference.md §1.6-§1.8): synthesized, not
recorded. A two-turn scenario holds its turns in order per stream flag (the replay serves matching
interactions in cassette order), so a library may use either mode.
"""

from __future__ import annotations

from typing import Any

from harness.cassette.synthesize import anthropic as A
from harness.cassette.synthesize.common import Synthesized

USAGE = {"input_tokens": 21, "output_tokens": 9}


def _turns(name: str, prompt: str, *turns: tuple[list[dict[str, Any]], str, dict[str, int]]) -> list[Any]:
    """Each turn's non-streaming interactions first, then each turn's streaming ones, in turn order."""
    pairs = [
        A.ok_interactions(f"{name}-{i}", prompt, blocks, stop, u) for i, (blocks, stop, u) in enumerate(turns)
    ]
    return [p[0] for p in pairs] + [p[1] for p in pairs]


def catalogue() -> dict[str, tuple[str, list[dict[str, Any]]]]:
    text = [A.text("Hello from ", "the scripted ", "provider.")]
    weather = [A.tool("tool-round-trip", 0, "get_weather", '{"city": ', '"Oslo"}')]
    answer = [A.text("It is 7 degrees ", "in Oslo.")]
    parallel = [
        A.text("Looking both up."),
        A.tool("parallel-tools", 0, "get_weather", '{"city":', ' "Oslo"}'),
        A.tool("parallel-tools", 1, "get_time", '{"timezone": ', '"Europe/Paris"}'),
    ]
    structured = [A.text('{"city": "Oslo", ', '"temperature_c": 7}')]
    limited = A.error_interactions(
        "rate-limit",
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per minute.",
        {"retry-after": "1", "x-should-retry": "true"},
    )
    retried = _turns("rate-limit-retry", "[gc] retried", (text, "end_turn", USAGE))
    mid = A.ok_interactions("mid-stream-error", "[gc] mid-stream", text, "end_turn", USAGE)
    # The stream: message_start, the text block's start and two deltas, then `event: error` (§1.7).
    stream_body = mid[1]["response"]["body"]["string"].split("\n\n")
    kept = [e + "\n\n" for e in stream_body[:5] if e.strip()]
    error = (
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    mid[1]["response"]["body"]["string"] = "".join(kept) + error
    mid[0] = A.error_interactions("mid-stream-error", 529, "overloaded_error", "Overloaded")[0]
    return {
        "text": (
            "A three-piece text answer, 21 input and 9 output tokens.",
            A.ok_interactions("text", "[gc] hello", text, "end_turn", USAGE),
        ),
        "tool-round-trip": (
            "Turn 1: get_weather(city=Oslo) as a tool_use; turn 2 (after the tool result): a text answer.",
            _turns(
                "tool-round-trip", "[gc] weather", (weather, "tool_use", USAGE), (answer, "end_turn", USAGE)
            ),
        ),
        "parallel-tools": (
            "A text block, then get_weather(Oslo) and get_time(Europe/Paris) as two tool_use blocks.",
            A.ok_interactions("parallel-tools", "[gc] both", parallel, "tool_use", USAGE),
        ),
        "structured": (
            "The JSON object a json_schema answer holds, as text: city Oslo, temperature_c 7.",
            A.ok_interactions("structured", "[gc] structured", structured, "end_turn", USAGE),
        ),
        "rate-limit": ("HTTP 429 rate_limit_error with retry-after: 1, on every attempt.", limited),
        "rate-limit-retry": (
            "HTTP 429 with retry-after: 1 once, then the text answer (per stream flag).",
            _interleave_429(limited, retried),
        ),
        "mid-stream-error": (
            "Streaming: message_start, two text deltas, then `event: error` overloaded_error after HTTP 200. "
            "Non-streaming: HTTP 529 overloaded_error.",
            mid,
        ),
    }


def _interleave_429(limited: list[Any], retried: list[Any]) -> list[Any]:
    """[429, text] for the non-streaming request, then the same for the streaming one."""
    return [limited[0], retried[0], limited[1], retried[1]]


def cassettes() -> list[Synthesized]:
    from harness.cassette.synthesize import clients_families

    return [*_anthropic(), *clients_families.cassettes()]


def _anthropic() -> list[Synthesized]:
    return [
        Synthesized(
            f"clients/anthropic/{name}",
            {
                "origin": "synthesized",
                "date": "2026-12-01",
                "provider": "anthropic",
                "api_version": A.API_VERSION,
                "model": A.MODEL,
                "description": description,
                "source": "wire-reference.md §1.6-§1.8; built by harness/cassette/synthesize/clients.py",
            },
            interactions,
        )
        for name, (description, interactions) in catalogue().items()
    ]
