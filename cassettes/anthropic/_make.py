"""Regenerate the synthesized Anthropic cassettes in this folder: `python cassettes/anthropic/_make.py`.

Every cassette is built from the documented Anthropic wire format (wire-reference.md §1.6 Message, §1.7 SSE
events, §1.8 error envelope and status table) and written as vcrpy version-1 YAML (§3.1). Each holds a
non-streaming interaction (`"stream": false`) and a streaming one (`"stream": true`). Ids are derived from
the cassette name, so regenerating gives byte-identical files. The YAML files are what ships; this script
only keeps them consistent. Recorded requests carry no credentials.
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
MODEL = "claude-sonnet-5-5"
API_VERSION = "2026-10-21"
DATE = "2026-11-29"
URI = "https://api.anthropic.com/v1/messages"
B62 = string.digits + string.ascii_letters


def _rand(name: str, salt: str, n: int) -> str:
    digest = hashlib.sha256(f"{name}/{salt}".encode()).digest()
    num = int.from_bytes(digest, "big")
    out = []
    for _ in range(n):
        num, r = divmod(num, 62)
        out.append(B62[r])
    return "".join(out)


def msg_id(name: str) -> str:
    return "msg_01" + _rand(name, "msg", 22)


def tool_id(name: str, i: int) -> str:
    return "toolu_01" + _rand(name, f"tool{i}", 22)


def req_id(name: str, i: int) -> str:
    return "req_011C" + _rand(name, f"req{i}", 20)


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Requests


def request(name: str, *, stream: bool, prompt: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        **(extra or {}),
        "stream": stream,
    }
    return {
        "body": dumps(body),
        "headers": {
            "accept": ["application/json"],
            "anthropic-version": [API_VERSION],
            "content-type": ["application/json"],
            "user-agent": ["UA"],
            "x-stainless-retry-count": ["0"],
        },
        "method": "POST",
        "uri": URI,
    }


# ---------------------------------------------------------------------------------------------
# Answers


def usage(u: dict[str, int], *, final: bool = True) -> dict[str, Any]:
    """The `usage` of a Message (§1.6): every cache field present, thinking in output_tokens_details."""
    cw = u.get("cache_creation_input_tokens", 0)
    out: dict[str, Any] = {
        "input_tokens": u["input_tokens"],
        "cache_creation_input_tokens": cw,
        "cache_read_input_tokens": u.get("cache_read_input_tokens", 0),
        "cache_creation": {"ephemeral_5m_input_tokens": cw, "ephemeral_1h_input_tokens": 0},
        "output_tokens": u["output_tokens"] if final else 1,
        "service_tier": "standard",
    }
    if final and "thinking_tokens" in u:
        out["output_tokens_details"] = {"thinking_tokens": u["thinking_tokens"]}
    if "web_search_requests" in u:  # §1.6 Usage.server_tool_use: the billed server tool requests
        out["server_tool_use"] = {"web_fetch_requests": 0, "web_search_requests": u["web_search_requests"]}
    return out


def message(
    name: str, blocks: list[dict[str, Any]], stop_reason: str, u: dict[str, int], **extra: Any
) -> dict[str, Any]:
    content = []
    for b in blocks:
        if b["type"] == "text" and b.get("citations"):
            content.append({"type": "text", "text": "".join(b["pieces"]), "citations": b["citations"]})
        elif b["type"] == "text":
            content.append({"type": "text", "text": "".join(b["pieces"])})
        elif b["type"] == "server_tool_use":
            content.append(
                {
                    "type": "server_tool_use",
                    "id": b["id"],
                    "name": b["name"],
                    "input": json.loads("".join(b["pieces"])),
                }
            )
        elif b["type"] == "web_search_tool_result":
            content.append(
                {"type": "web_search_tool_result", "tool_use_id": b["tool_use_id"], "content": b["content"]}
            )
        elif b["type"] == "thinking":
            content.append(
                {"type": "thinking", "thinking": "".join(b["pieces"]), "signature": b["signature"]}
            )
        elif b["type"] == "tool_use":
            content.append(
                {
                    "type": "tool_use",
                    "id": b["id"],
                    "name": b["name"],
                    "input": json.loads("".join(b["pieces"])),
                    "caller": {"type": "direct"},
                }
            )
    return {
        "id": msg_id(name),
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": extra.get("stop_sequence"),
        "stop_details": extra.get("stop_details"),
        "usage": usage(u),
    }


def event(kind: str, data: dict[str, Any]) -> str:
    # §1.7: every event is named, `event:` equals data.type, one blank line after each event.
    return f"event: {kind}\ndata: {dumps(data)}\n\n"


def sse_events(
    name: str, blocks: list[dict[str, Any]], stop_reason: str, u: dict[str, int], **extra: Any
) -> list[str]:
    start_usage = {
        "input_tokens": u["input_tokens"],
        "cache_creation_input_tokens": u.get("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": u.get("cache_read_input_tokens", 0),
        "output_tokens": 1,
        "service_tier": "standard",
    }
    events = [
        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id(name),
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "stop_details": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    for index, b in enumerate(blocks):
        if b["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in b["pieces"]]
            if b.get(
                "citations"
            ):  # §1.7: a cited text block starts with `citations: []`, then citations_delta
                start = {"type": "text", "text": "", "citations": []}
                deltas = [{"type": "citations_delta", "citation": c} for c in b["citations"]] + deltas
        elif b["type"] == "server_tool_use":
            start = {"type": "server_tool_use", "id": b["id"], "name": b["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in b["pieces"]]
        elif b["type"] == "web_search_tool_result":
            start = {
                "type": "web_search_tool_result",
                "tool_use_id": b["tool_use_id"],
                "content": b["content"],
            }
            deltas = []
        elif b["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in b["pieces"]]
            deltas.append({"type": "signature_delta", "signature": b["signature"]})
        else:
            start = {
                "type": "tool_use",
                "id": b["id"],
                "name": b["name"],
                "caller": {"type": "direct"},
                "input": {},
            }
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *b["pieces"]]]
        events.append(
            event(
                "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            )
        )
        if index == 0:
            events.append('event: ping\ndata: {"type": "ping"}\n\n')  # verbatim SDK fixture spacing
        for d in deltas:
            events.append(
                event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            )
        events.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
    final_usage: dict[str, Any] = {
        "input_tokens": u["input_tokens"],
        "cache_creation_input_tokens": u.get("cache_creation_input_tokens", 0),
        "cache_read_input_tokens": u.get("cache_read_input_tokens", 0),
        "output_tokens": u["output_tokens"],
    }
    if "thinking_tokens" in u:
        final_usage["output_tokens_details"] = {"thinking_tokens": u["thinking_tokens"]}
    if "web_search_requests" in u:
        final_usage["server_tool_use"] = {
            "web_fetch_requests": 0,
            "web_search_requests": u["web_search_requests"],
        }
    delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": extra.get("stop_sequence")}
    if extra.get("stop_details") is not None:
        delta["stop_details"] = extra["stop_details"]
    events.append(event("message_delta", {"type": "message_delta", "delta": delta, "usage": final_usage}))
    events.append(event("message_stop", {"type": "message_stop"}))
    return events


def ok_headers(name: str, i: int, *, sse: bool) -> dict[str, list[str]]:
    h = {
        "content-type": ["text/event-stream; charset=utf-8" if sse else "application/json"],
        "request-id": [req_id(name, i)],
        "anthropic-ratelimit-requests-limit": ["4000"],
        "anthropic-ratelimit-requests-remaining": ["3999"],
        "anthropic-ratelimit-requests-reset": ["2026-11-29T12:00:01Z"],
        "anthropic-ratelimit-input-tokens-limit": ["2000000"],
        "anthropic-ratelimit-input-tokens-remaining": ["1999000"],
        "anthropic-ratelimit-input-tokens-reset": ["2026-11-29T12:00:01Z"],
        "anthropic-ratelimit-output-tokens-limit": ["400000"],
        "anthropic-ratelimit-output-tokens-remaining": ["400000"],
        "anthropic-ratelimit-output-tokens-reset": ["2026-11-29T12:00:01Z"],
    }
    if sse:
        h["cache-control"] = ["no-cache"]
    return h


def ok_interactions(
    name: str, prompt: str, blocks, stop_reason, u, req_extra=None, **extra
) -> list[dict[str, Any]]:
    body = dumps(message(name, blocks, stop_reason, u, **extra))
    stream = "".join(sse_events(name, blocks, stop_reason, u, **extra))
    return [
        {
            "request": request(name, stream=False, prompt=prompt, extra=req_extra),
            "response": {
                "body": {"string": body},
                "headers": ok_headers(name, 0, sse=False),
                "status": {"code": 200, "message": "OK"},
            },
        },
        {
            "request": request(name, stream=True, prompt=prompt, extra=req_extra),
            "response": {
                "body": {"string": stream},
                "headers": ok_headers(name, 1, sse=True),
                "status": {"code": 200, "message": "OK"},
            },
        },
    ]


REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    413: "Request Entity Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    504: "Gateway Timeout",
    529: "Overloaded",
}


def error_interactions(
    name: str, status: int, etype: str, text: str, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """§1.8: the same JSON error envelope for the non-streaming and the streaming request (the stream never starts)."""
    out = []
    for i, stream in enumerate((False, True)):
        body = {"type": "error", "error": {"type": etype, "message": text}, "request_id": req_id(name, i)}
        h = {"content-type": ["application/json"], "request-id": [req_id(name, i)]}
        for k, v in (headers or {}).items():
            h[k] = [v]
        out.append(
            {
                "request": request(name, stream=stream, prompt="[gc] error case"),
                "response": {
                    "body": {"string": dumps(body)},
                    "headers": h,
                    "status": {"code": status, "message": REASONS[status]},
                },
            }
        )
    return out


# ---------------------------------------------------------------------------------------------
# The catalogue


def text(*pieces: str) -> dict[str, Any]:
    return {"type": "text", "pieces": list(pieces)}


def tool(name: str, i: int, tool_name: str, *pieces: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id(name, i), "name": tool_name, "pieces": list(pieces)}


def thinking(name: str, *pieces: str) -> dict[str, Any]:
    return {"type": "thinking", "pieces": list(pieces), "signature": "EqQBCgIYAhIM" + _rand(name, "sig", 48)}


LONG = [
    f"Line {i:02d} of a long answer, streamed slowly so pacing and keep-alives can be observed.\n"
    for i in range(1, 41)
]


def catalogue() -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    c: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}

    def ok(name, description, source, prompt, blocks_fn, stop, u, **extra):
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
    for name, status, etype, text_, headers in errors:
        c[name] = (
            f"HTTP {status} {etype} for both the non-streaming and the streaming request (the stream never starts).",
            "wire-reference.md §1.8 (envelope, status table)",
            error_interactions(name, status, etype, text_, headers),
        )
    return c


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # SSE bodies as literal blocks: readable, and loaded back byte-exact.
    if "\n" in value and value.startswith("event:"):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def main() -> None:
    for name, (description, source, interactions) in catalogue().items():
        doc = {
            "metadata": {
                "origin": "synthesized",
                "date": DATE,
                "provider": "anthropic",
                "api_version": API_VERSION,
                "model": MODEL,
                "description": description,
                "source": source,
            },
            "interactions": interactions,
            "version": 1,
        }
        text_ = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
        (HERE / f"{name}.yaml").write_text(text_, encoding="utf-8")


if __name__ == "__main__":
    main()
