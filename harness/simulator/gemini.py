"""The simulator's Gemini `generateContent` wire format (google-genai's types: GenerateContentRequest, Candidate,
Part, FunctionCall, UsageMetadata): read a request into an `Ask`, write a `Generated` answer as one
`GenerateContentResponse` or as the `streamGenerateContent?alt=sse` events.

Gemini has no tool-use finish reason: a turn that calls functions ends `STOP`, as does one cut at a stop
sequence. Its function calls carry no id; its usage counts the cached share inside `promptTokenCount`
(`cachedContentTokenCount`) and thoughts beside the answer (`thoughtsTokenCount`, not in `candidatesTokenCount`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import SimulatorRequestError
from harness.simulator import core

DEFAULT_MAX_OUTPUT_TOKENS = 8192
_FINISH = {"end": "STOP", "stop_sequence": "STOP", "max_tokens": "MAX_TOKENS", "tool": "STOP"}


def model_of(path: str) -> str:
    """`gemini-2.5-flash` from `/v1beta/models/gemini-2.5-flash:generateContent`."""
    _, found, rest = path.partition("/models/")
    return rest.split(":", 1)[0] if found else "gemini"


def _parts_text(content: Any) -> str:
    parts = core.as_object(content).get("parts")
    return " ".join(
        p["text"] for p in parts or [] if isinstance(p, Mapping) and isinstance(p.get("text"), str)
    )


def _answers_function(contents: Sequence[Any]) -> bool:
    last = core.as_object(contents[-1]) if contents else {}
    return any(isinstance(p, Mapping) and "functionResponse" in p for p in last.get("parts") or [])


def _tools(body: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    found = []
    for tool in body.get("tools") or []:
        for decl in core.as_object(tool).get("functionDeclarations") or []:
            decl = core.as_object(decl)
            if isinstance(decl.get("name"), str):
                schema = decl.get("parametersJsonSchema", decl.get("parameters", {}))
                found.append((decl["name"], _lower_types(schema)))
    return tuple(found)


def _lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI-style schemas spell types in capitals (`STRING`); JSON Schema's are lower case."""
    if isinstance(schema, Mapping):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def gemini_ask(body: Mapping[str, Any]) -> core.Ask:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise SimulatorRequestError("* GenerateContentRequest.contents: contents is not specified")
    users = [c for c in contents if isinstance(c, Mapping) and c.get("role", "user") == "user"]
    system = _parts_text(body.get("systemInstruction"))
    all_text = " ".join(t for t in (system, *(_parts_text(c) for c in contents)) if t)
    config = core.as_object(body.get("generationConfig"))
    calling = core.as_object(core.as_object(body.get("toolConfig")).get("functionCallingConfig"))
    mode = str(calling.get("mode") or "AUTO").upper()
    allowed = [n for n in calling.get("allowedFunctionNames") or [] if isinstance(n, str)]
    forced: str | None = None
    if mode == "ANY":  # VALIDATED lets the model answer in text or call, as AUTO does
        forced = allowed[0] if len(allowed) == 1 else "*"
    thinking = core.as_object(config.get("thinkingConfig"))
    budget = thinking.get("thinkingBudget")
    schema = config.get("responseJsonSchema", config.get("responseSchema"))
    json_mime = config.get("responseMimeType") == "application/json"
    stops = tuple(s for s in config.get("stopSequences") or [] if isinstance(s, str))
    return core.Ask(
        prompt=_parts_text(users[-1]) if users else "",
        prompt_tokens=core.count_tokens(all_text) + 2 * len(contents),
        max_tokens=core.max_tokens_of(config.get("maxOutputTokens"), DEFAULT_MAX_OUTPUT_TOKENS),
        stops=stops,
        tools=_tools(body),
        forced_tool=forced,
        tool_choice_none=mode == "NONE",
        parallel=True,
        after_tool_result=_answers_function(contents),
        thinking=thinking.get("includeThoughts") is True or (isinstance(budget, int) and budget > 0),
        output_schema=_lower_types(schema) if json_mime and schema is not None else None,
        json_object=json_mime and schema is None,
        cache_prefixes=(all_text,),
        cache_auto=True,
        auto_min=core.GEMINI_MIN_CACHED_TOKENS,
        instructions=" ".join(t for t in (system, *(_parts_text(c) for c in users)) if t),
    )


def shows_thoughts(body: Mapping[str, Any]) -> bool:
    config = core.as_object(core.as_object(body.get("generationConfig")).get("thinkingConfig"))
    return config.get("includeThoughts") is True


def _usage(gen: core.Generated, candidates: int) -> dict[str, Any]:
    prompt = gen.input_tokens + gen.cache_read + gen.cache_write
    usage: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + gen.thinking_tokens,
    }
    if gen.cache_read:
        usage["cachedContentTokenCount"] = gen.cache_read
    if gen.thinking_tokens:
        usage["thoughtsTokenCount"] = gen.thinking_tokens
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    return usage


def _parts(gen: core.Generated, thoughts: bool) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if gen.thinking and thoughts:
        parts.append({"text": gen.thinking, "thought": True})
    if gen.text or not gen.tool_calls:
        parts.append({"text": gen.text})
    parts += [{"functionCall": {"name": c.name, "args": dict(c.arguments)}} for c in gen.tool_calls]
    return parts


def gemini_response(gen: core.Generated, model: str, response_id: str, *, thoughts: bool) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"parts": _parts(gen, thoughts), "role": "model"},
                "finishReason": _FINISH[gen.stop],
                "index": 0,
            }
        ],
        "usageMetadata": _usage(gen, gen.output_tokens - gen.thinking_tokens),
        "modelVersion": model,
        "responseId": response_id,
    }


def gemini_events(response: Mapping[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """The `alt=sse` events of a finished response: text in pieces, each function call whole in its own event,
    the finish reason and the final usage on the last one."""
    candidate = response["candidates"][0]
    usage = response["usageMetadata"]
    pieces: list[dict[str, Any]] = []
    for part in candidate["content"]["parts"]:
        if part.get("text"):
            pieces += [{**part, "text": p} for p in core.pieces(part["text"], rng)]
        elif "text" not in part:
            pieces.append(part)
    pieces = pieces or [{"text": ""}]
    events = []
    for i, part in enumerate(pieces):
        last = i == len(pieces) - 1
        event_candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        if last:
            event_candidate["finishReason"] = candidate["finishReason"]
        partial = {k: usage[k] for k in ("promptTokenCount", "promptTokensDetails")}
        partial["totalTokenCount"] = usage["promptTokenCount"]
        events.append(
            {
                "candidates": [event_candidate],
                "usageMetadata": usage if last else partial,
                "modelVersion": response["modelVersion"],
                "responseId": response["responseId"],
            }
        )
    return events


def gemini_sse(events: Sequence[Mapping[str, Any]]) -> bytes:
    # The Gemini API frames its events with CRLF line ends.
    return "".join(f"data: {json.dumps(e, ensure_ascii=False)}\r\n\r\n" for e in events).encode()


def gemini_error(status: int, message: str) -> dict[str, Any]:
    names = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}
    return {"error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}}
