"""The synthesized Anthropic cassettes (cassettes/anthropic/).

Every cassette is built from the documented Anthropic wire format (wire-reference.md §1.6 Message, §1.7 SSE
events, §1.8 error envelope and status table) and written as vcrpy version-1 YAML (§3.1). Each holds a
non-streaming interaction (`"stream": false`) and a streaming one (`"stream": true`). Ids are derived from
the cassette name, so regenerating gives byte-identical files. The YAML files are what ships; this script
only keeps them consistent. Recorded requests carry no credentials.
"""

from __future__ import annotations

import json
from typing import Any

from harness.cassette.synthesize.common import rand

MODEL = "claude-sonnet-5-5"
API_VERSION = "2026-10-21"
DATE = "2026-11-29"
URI = "https://api.anthropic.com/v1/messages"


def _rand(name: str, salt: str, n: int) -> str:
    return rand(name, salt, n)


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
        start: dict[str, Any]
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
    name: str,
    prompt: str,
    blocks: list[dict[str, Any]],
    stop_reason: str,
    u: dict[str, Any],
    req_extra: dict[str, Any] | None = None,
    **extra: Any,
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
