"""The synthesized Gemini cassettes (cassettes/gemini/).

The Gemini API's REST wire format (`v1beta`), as the official `google-genai` SDK (3.6) sends and reads it:

* non-streaming: `POST /v1beta/models/{model}:generateContent`, one `GenerateContentResponse` JSON object;
* streaming: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`, `data: <GenerateContentResponse>`
  events separated by CRLF blank lines, no event names and no end sentinel; each event is a whole response
  object holding the new parts only; `usageMetadata` grows as the stream goes and the last event carries the
  `finishReason` and the final counts;
* JSON in camelCase (`google/genai/types.py`, aliased by the SDK's `_common.BaseModel`): `candidates[].content
  {role: "model", parts: [{text} | {functionCall: {name, args}} | {thought: true, text}]}`, `finishReason`
  (`STOP`, `MAX_TOKENS`, `SAFETY`, …; a function call also ends with `STOP`), `index`; `usageMetadata
  {promptTokenCount, candidatesTokenCount, totalTokenCount, cachedContentTokenCount, thoughtsTokenCount,
  promptTokensDetails}`; `modelVersion`, `responseId`. A Gemini API function call has no id (the Vertex API may
  add one); the gateway must mint one;
* errors: `{"error": {"code": <http status>, "message": "...", "status": "INVALID_ARGUMENT" | ...}}`.

The request is never part of matching (the replay upstream matches the endpoint, and streams by path), so
recorded requests are only examples of what a gateway sends: `contents`, `systemInstruction`, `tools
[{functionDeclarations}]`, `generationConfig`. They carry no credentials (the API takes `x-goog-api-key`).
Each cassette holds a non-streaming and a streaming interaction; ids derive from the cassette name, so
regenerating gives byte-identical files.
"""

from __future__ import annotations

import json
from typing import Any

from harness.cassette.synthesize.common import Synthesized, rand

MODEL = "gemini-2.5-flash"
API_VERSION = "v1beta"
DATE = "2026-11-29"
BASE = f"https://generativelanguage.googleapis.com/{API_VERSION}/models/{MODEL}"
SOURCE = "google-genai 3.6.1 types.py (GenerateContentResponse, Candidate, Part, FunctionCall, UsageMetadata)"


def _rand(name: str, salt: str, n: int) -> str:
    # The Anthropic generator's deterministic base-62 ids, under a "gemini/" namespace.
    return rand(f"gemini/{name}", salt, n)


def response_id(name: str) -> str:
    return _rand(name, "id", 22)


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Requests


def request(*, stream: bool, prompt: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    given = dict(extra or {})
    config = given.pop("generationConfig", {})
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": prompt}]}],
        **given,
        "generationConfig": {"maxOutputTokens": 1024, **config},
    }
    return {
        "body": dumps(body),
        "headers": {
            "content-type": ["application/json"],
            "user-agent": ["google-genai-sdk/3.6.1 gl-python/3.11"],
            "x-goog-api-client": ["google-genai-sdk/3.6.1 gl-python/3.11"],
        },
        "method": "POST",
        "uri": f"{BASE}:streamGenerateContent?alt=sse" if stream else f"{BASE}:generateContent",
    }


# ---------------------------------------------------------------------------------------------
# Answers. A part is {"text": ...} (cut into stream pieces) or {"functionCall": {...}} (always whole).


def text(*pieces: str) -> dict[str, Any]:
    return {"kind": "text", "pieces": list(pieces)}


def call(fn: str, args: dict[str, Any], signature: str | None = None) -> dict[str, Any]:
    """A functionCall part; `signature`: the part's thoughtSignature (a thinking model's first call of a step)."""
    part: dict[str, Any] = {"kind": "call", "functionCall": {"name": fn, "args": args}}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def usage(u: dict[str, int], *, output: int | None = None) -> dict[str, Any]:
    prompt = u["prompt"]
    out = u["output"] if output is None else output
    meta: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": out}
    total = prompt + out
    if u.get("cached"):
        meta["cachedContentTokenCount"] = u["cached"]
    if u.get("thoughts") and output is None:
        meta["thoughtsTokenCount"] = u["thoughts"]
        total += u["thoughts"]
    meta["totalTokenCount"] = total
    meta["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    if u.get("cached"):
        meta["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": u["cached"]}]
    return meta


def _part(p: dict[str, Any]) -> dict[str, Any]:
    if p["kind"] == "text":
        return {"text": "".join(p["pieces"])}
    return {k: v for k, v in p.items() if k in ("functionCall", "thoughtSignature")}


def response(name: str, parts: list[dict[str, Any]], finish: str, u: dict[str, int]) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"parts": [_part(p) for p in parts], "role": "model"},
                "finishReason": finish,
                "index": 0,
            }
        ],
        "usageMetadata": usage(u),
        "modelVersion": MODEL,
        "responseId": response_id(name),
    }


def stream_events(
    name: str, parts: list[dict[str, Any]], finish: str, u: dict[str, int]
) -> list[dict[str, Any]]:
    """One event per text piece or function call; the last one carries finishReason and the final usage."""
    pieces: list[dict[str, Any]] = []
    for p in parts:
        if p["kind"] == "text":
            pieces.extend({"text": t} for t in p["pieces"])
        else:
            pieces.append(_part(p))
    events = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        candidate: dict[str, Any] = {"content": {"parts": [piece], "role": "model"}}
        if last:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        events.append(
            {
                "candidates": [candidate],
                "usageMetadata": usage(u) if last else usage(u, output=min(i + 1, u["output"])),
                "modelVersion": MODEL,
                "responseId": response_id(name),
            }
        )
    return events


def sse(events: list[dict[str, Any]]) -> str:
    # The Gemini API frames alt=sse events with CRLF line ends and no terminating sentinel.
    return "".join(f"data: {dumps(e)}\r\n\r\n" for e in events)


def headers(*, sse_: bool) -> dict[str, list[str]]:
    return {
        "content-type": ["text/event-stream" if sse_ else "application/json; charset=UTF-8"],
        "vary": ["Origin", "X-Origin", "Referer"],
        "server": ["scaffolding on HTTPServer2"],
        "x-content-type-options": ["nosniff"],
    }


def ok_interactions(
    name: str,
    prompt: str,
    parts: list[dict[str, Any]],
    finish: str,
    u: dict[str, int],
    req_extra: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    return [
        {
            "request": request(stream=False, prompt=prompt, extra=req_extra),
            "response": {
                "body": {"string": dumps(response(name, parts, finish, u))},
                "headers": headers(sse_=False),
                "status": {"code": 200, "message": "OK"},
            },
        },
        {
            "request": request(stream=True, prompt=prompt, extra=req_extra),
            "response": {
                "body": {"string": sse(stream_events(name, parts, finish, u))},
                "headers": headers(sse_=True),
                "status": {"code": 200, "message": "OK"},
            },
        },
    ]


REASONS = {
    400: "Bad Request",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}
STATUS = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def error_interaction(
    status: int, message: str, *, stream: bool, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The Google API error envelope; a stream that fails before it starts answers with the same JSON."""
    error: dict[str, Any] = {"code": status, "message": message, "status": STATUS[status]}
    if details:
        error["details"] = details
    body = {"error": error}
    return {
        "request": request(stream=stream, prompt="[gc] error case"),
        "response": {
            "body": {"string": json.dumps(body, indent=2) + "\n"},
            "headers": headers(sse_=False),
            "status": {"code": status, "message": REASONS[status]},
        },
    }


# ---------------------------------------------------------------------------------------------
# The catalogue

TOOLS = {
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Current weather for a city",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                }
            ]
        }
    ]
}
LONG = [
    f"Line {i:02d} of a long answer, streamed slowly so pacing and keep-alives can be observed.\n"
    for i in range(1, 41)
]


def catalogue() -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """name -> (description, interactions)."""
    c: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    c["text-basic"] = (
        "Plain text answer in three parts, finishReason STOP.",
        ok_interactions(
            "text-basic",
            "What is an API gateway?",
            [text("An API gateway", " is one entry point", " in front of many services.")],
            "STOP",
            {"prompt": 24, "output": 14},
        ),
    )
    c["tool-call"] = (
        "One whole functionCall part (get_weather, city Oslo), no id (the Gemini API has none), finishReason STOP.",
        ok_interactions(
            "tool-call",
            "What's the weather in Oslo? Use the tool.",
            [call("get_weather", {"city": "Oslo"})],
            "STOP",
            {"prompt": 58, "output": 7},
            req_extra=TOOLS,
        ),
    )
    c["tool-call-parallel"] = (
        "A text part, then two functionCall parts (get_weather Oslo, get_time Europe/Paris) without ids: "
        "they must become tool calls 0 and 1 with two different minted ids.",
        ok_interactions(
            "tool-call-parallel",
            "Weather in Oslo and the time in Paris, please.",
            [
                text("Checking both."),
                call("get_weather", {"city": "Oslo"}),
                call("get_time", {"timezone": "Europe/Paris"}),
            ],
            "STOP",
            {"prompt": 96, "output": 19},
            req_extra=TOOLS,
        ),
    )
    c["max-tokens"] = (
        "Text cut at the output limit: finishReason MAX_TOKENS.",
        ok_interactions(
            "max-tokens",
            "Tell me the history of caching.",
            [text("The history of caching", " begins with the CPU caches", " of the 1960s, when")],
            "MAX_TOKENS",
            {"prompt": 25, "output": 16},
        ),
    )
    c["long-text"] = (
        "A long text answer in 40 events, for mid-stream faults.",
        ok_interactions(
            "long-text", "Write forty lines.", [text(*LONG)], "STOP", {"prompt": 19, "output": 720}
        ),
    )
    c["cache-read"] = (
        "Text answer whose prompt was mostly served from Gemini's context cache (cachedContentTokenCount 2048 of "
        "promptTokenCount 2060).",
        ok_interactions(
            "cache-read",
            "And the next turn?",
            [text("Here is", " the next turn.")],
            "STOP",
            {"prompt": 2060, "output": 18, "cached": 2048},
        ),
    )
    c["unicode-text"] = (
        "Text full of multi-byte UTF-8 (accents, CJK, emoji, a character outside the BMP), finishReason STOP.",
        ok_interactions(
            "unicode-text",
            "Greet me in three languages.",
            [text("Grüße aus Zürich — ", "こんにちは、世界！", " 🎉🚀 ", "¡Olé! ∑∞≠ 𝄞")],  # noqa: RUF001 (deliberate non-ASCII)
            "STOP",
            {"prompt": 21, "output": 33},
        ),
    )
    c["text-plus-tool"] = (
        "A text part (Let me check.), then one functionCall part (get_weather, city Oslo), finishReason STOP.",
        ok_interactions(
            "text-plus-tool",
            "What's the weather in Oslo? Use the tool.",
            [text("Let me check."), call("get_weather", {"city": "Oslo"})],
            "STOP",
            {"prompt": 58, "output": 12},
            req_extra=TOOLS,
        ),
    )
    c["safety"] = (
        "An answer stopped by Gemini's safety filter: one text part, finishReason SAFETY (content_filter).",
        ok_interactions(
            "safety",
            "Write something the filter stops.",
            [text("I can")],
            "SAFETY",
            {"prompt": 18, "output": 2},
        ),
    )
    c["error-400"] = (
        "HTTP 400 INVALID_ARGUMENT for both the non-streaming and the streaming request (the stream never starts).",
        [
            error_interaction(400, "* GenerateContentRequest.contents: contents is not specified\n", stream=s)
            for s in (False, True)
        ],
    )
    c["error-token-limit"] = (
        "HTTP 400 INVALID_ARGUMENT: the input is over the model's token limit, for both stream flags (the stream "
        "never starts).",
        [
            error_interaction(
                400,
                "The input token count (1100312) exceeds the maximum number of tokens allowed (1048576).",
                stream=s,
            )
            for s in (False, True)
        ],
    )
    c["error-429"] = (
        "HTTP 429 RESOURCE_EXHAUSTED (quota) for both stream flags (the stream never starts), with the "
        "google.rpc.RetryInfo detail a real quota error carries (retryDelay 2s; Gemini sends no Retry-After "
        "header).",
        [
            error_interaction(
                429,
                "Resource has been exhausted (e.g. check quota).",
                stream=s,
                details=[{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}],
            )
            for s in (False, True)
        ],
    )
    c["error-404"] = (
        "HTTP 404 NOT_FOUND: a model the API does not serve, for both stream flags (the stream never starts).",
        [
            error_interaction(
                404,
                "models/gc-model-that-does-not-exist is not found for API version v1beta, or is not supported for "
                "generateContent. Call ListModels to see the list of available models and their supported methods.",
                stream=s,
            )
            for s in (False, True)
        ],
    )
    c["error-503"] = (
        "HTTP 503 UNAVAILABLE (model overloaded) for both stream flags (the stream never starts).",
        [
            error_interaction(503, "The model is overloaded. Please try again later.", stream=s)
            for s in (False, True)
        ],
    )
    # Retry before the first token: per stream flag the first call is a 503, every later call a text answer.
    ok = ok_interactions(
        "fallback-503",
        "What is an API gateway?",
        [text("An API gateway", " is one entry point", " in front of many services.")],
        "STOP",
        {"prompt": 24, "output": 14},
    )
    c["fallback-503"] = (
        "Retry or fallback before the first token: per stream flag, the first call gets HTTP 503 UNAVAILABLE, "
        "every later call a text answer (STOP).",
        [
            error_interaction(503, "The model is overloaded. Please try again later.", stream=False),
            ok[0],
            error_interaction(503, "The model is overloaded. Please try again later.", stream=True),
            ok[1],
        ],
    )
    return c


def cassettes() -> list[Synthesized]:
    return [
        Synthesized(
            f"gemini/{name}",
            {
                "origin": "synthesized",
                "date": DATE,
                "provider": "gemini",
                "api_version": API_VERSION,
                "model": MODEL,
                "description": description,
                "source": SOURCE,
            },
            interactions,
        )
        for name, (description, interactions) in catalogue().items()
    ]
