"""What a gateway can observe in a recorded answer, per provider family: one `Summary` per interaction, in the
family's own words (stop reason, content kinds, events, fields). `record` diffs two summaries; a scenario check
reads one. Pure: ids, timestamps, signatures, text, token counts and rate limits are left out of every summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from harness import sse
from harness.cassette.document import Interaction
from harness.families import EndpointKind, endpoint_kind

# Response headers whose presence or value says nothing about the provider's behaviour; the diff skips them.
_VOLATILE_HEADER = re.compile(
    r"^(?:anthropic-ratelimit-.*|x-ratelimit-.*|retry-after(?:-ms)?|request-id|x-request-id|date|server|via|alt-svc"
    r"|cf-.*|x-envoy-.*|server-timing|strict-transport-security|x-robots-tag|content-length|content-encoding"
    r"|transfer-encoding|connection|keep-alive|vary|set-cookie|anthropic-organization-id)$"
)


# ---------------------------------------------------------------------------------------------
# Summaries


@dataclass(frozen=True)
class Summary:
    """One answer's observable shape. Which family's words label it is `kind`."""

    status: int
    body: str  # json | sse | the media type
    kind: EndpointKind | None = None
    model: str | None = None
    stop_reason: str | None = None  # stop_reason | finish_reason per choice | finishReason per candidate
    error_type: str | None = None
    blocks: tuple[str, ...] = ()  # content blocks / message parts and tool calls / Gemini parts, in order
    events: tuple[str, ...] = ()  # SSE event names or chunk kinds, runs of one label collapsed to `label*`
    event_count: int | None = None  # Gemini streams: how many `data:` events
    message_fields: frozenset[str] = frozenset()  # the top-level answer object's fields
    content_fields: frozenset[str] = frozenset()  # OpenAI: message / delta fields; Gemini: candidate fields
    usage_fields: frozenset[str] = frozenset()  # usage / usageMetadata, flattened
    delta_usage_fields: frozenset[str] = frozenset()  # Anthropic message_delta's usage (streams)
    headers: frozenset[str] = frozenset()  # response header names, volatile ones left out


def _flatten_keys(value: Any, prefix: str = "") -> frozenset[str]:
    if not isinstance(value, dict):
        return frozenset()
    keys: set[str] = set()
    for k, v in value.items():
        name = f"{prefix}{k}"
        keys.add(name)
        keys |= _flatten_keys(v, f"{name}.")
    return frozenset(keys)


def _collapse(names: Iterable[str]) -> tuple[str, ...]:
    # Live streams split text into a varying number of deltas; only the shape of the sequence is semantic.
    out: list[str] = []
    for name in names:
        if out and out[-1].rstrip("*") == name:
            out[-1] = f"{name}*"
        else:
            out.append(name)
    return tuple(out)


def _merge_text(parts: Iterable[str]) -> tuple[str, ...]:
    # Text arrives in a varying number of deltas or parts: consecutive ones are one. Tool calls stay one each.
    out: list[str] = []
    for part in parts:
        if not (out and out[-1] == part and "(" not in part):
            out.append(part)
    return tuple(out)


def parse_json(text: str | bytes | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def summarize(interaction: Interaction) -> Summary:
    resp = interaction.response
    kind = endpoint_kind(interaction.request.path)
    base = Summary(
        status=resp.status,
        body="sse" if resp.is_sse else "json",
        kind=kind,
        headers=frozenset(h for h in resp.headers if not _VOLATILE_HEADER.match(h)),
    )
    family = FAMILY_SUMMARIES.get(kind or "anthropic.messages", FAMILY_SUMMARIES["anthropic.messages"])
    if resp.is_sse:
        return family.stream(base, sse.decode(resp.body).events)
    data = parse_json(resp.body)
    media = resp.content_type.split(";")[0].strip().lower()
    if media != "application/json" and data is None:
        return replace(base, body=media or "none")
    if not isinstance(data, dict):
        return base
    if isinstance(data.get("error"), dict):  # a Response object carries `error: null`
        return replace(base, error_type=family.error_type(_dict(data.get("error"))))
    return family.answer(base, data)


# --- Anthropic Messages ----------------------------------------------------------------------


def _anthropic_block(block: Any) -> str:
    if not isinstance(block, dict):
        return "?"
    kind = str(block.get("type"))
    if kind in ("tool_use", "server_tool_use") and isinstance(block.get("name"), str):
        return f"{kind}({block['name']})"
    return kind


def _anthropic_answer(base: Summary, data: dict[str, Any]) -> Summary:
    return replace(
        base,
        model=_str(data.get("model")),
        stop_reason=data.get("stop_reason"),
        blocks=tuple(_anthropic_block(b) for b in _list(data.get("content"))),
        message_fields=frozenset(data),
        usage_fields=_flatten_keys(data.get("usage")),
    )


def _anthropic_stream(base: Summary, events: Iterable[sse.Event]) -> Summary:
    names: list[str] = []
    blocks: list[str] = []
    message: dict[str, Any] = {}
    stop_reason = error_type = None
    delta_usage: frozenset[str] = frozenset()
    for ev in events:
        names.append(ev.event or "(unnamed)")
        data = _dict(parse_json(ev.data))
        if ev.event == "message_start":
            message = _dict(data.get("message"))
        elif ev.event == "content_block_start":
            blocks.append(_anthropic_block(data.get("content_block")))
        elif ev.event == "message_delta":
            delta = _dict(data.get("delta"))
            stop_reason = delta.get("stop_reason", stop_reason)
            delta_usage |= _flatten_keys(data.get("usage"))
        elif ev.event == "error" and isinstance(data.get("error"), dict):
            error_type = str(data["error"].get("type"))
    return replace(
        base,
        model=_str(message.get("model")),
        stop_reason=stop_reason,
        error_type=error_type,
        blocks=tuple(blocks),
        events=_collapse(names),
        message_fields=frozenset(message),
        usage_fields=_flatten_keys(message.get("usage")),
        delta_usage_fields=delta_usage,
    )


# --- OpenAI Chat Completions -----------------------------------------------------------------


def _openai_parts(message: dict[str, Any]) -> list[str]:
    """`text`, `refusal`, `reasoning` when present and non-empty, then `tool_call(name)` per call."""
    parts = [label for field, label in _OPENAI_TEXT_FIELDS if message.get(field)]
    for call in _list(message.get("tool_calls")):
        name = _str(_dict(_dict(call).get("function")).get("name"))
        if name is not None:  # a stream's later fragments of a call carry no name
            parts.append(f"tool_call({name})")
    return parts


_OPENAI_TEXT_FIELDS = (
    ("reasoning_content", "reasoning"),
    ("reasoning", "reasoning"),
    ("content", "text"),
    ("refusal", "refusal"),
)


def _finish(choices: list[Any]) -> str | None:
    reasons = [str(r) for c in choices if (r := _dict(c).get("finish_reason")) is not None]
    return ",".join(reasons) or None


def _openai_answer(base: Summary, data: dict[str, Any]) -> Summary:
    choices = _list(data.get("choices"))
    message = _dict(_dict(choices[0]).get("message")) if choices else {}
    return replace(
        base,
        model=_str(data.get("model")),
        stop_reason=_finish(choices),
        blocks=tuple(_openai_parts(message)),
        message_fields=frozenset(data),
        content_fields=frozenset(message),
        usage_fields=_flatten_keys(data.get("usage")),
    )


def _chunk_label(chunk: dict[str, Any]) -> str:
    """What one chunk carries: `role`, `text`, `tool_calls`, `finish`, `usage`, joined with `+`."""
    choices = _list(chunk.get("choices"))
    if not choices:
        return "usage" if isinstance(chunk.get("usage"), dict) else "empty"
    first = _dict(choices[0])
    delta = _dict(first.get("delta"))
    kinds = [k for k in ("role", "tool_calls") if delta.get(k)]
    kinds[1:1] = [label for field, label in _OPENAI_TEXT_FIELDS if delta.get(field)]
    if first.get("finish_reason") is not None:
        kinds.append("finish")
    if isinstance(chunk.get("usage"), dict):
        kinds.append("usage")
    return "+".join(dict.fromkeys(kinds)) or "empty"


def _openai_stream(base: Summary, events: Iterable[sse.Event]) -> Summary:
    labels: list[str] = []
    parts: list[str] = []
    fields: set[str] = set()
    delta_fields: set[str] = set()
    summary = base
    for ev in events:
        if (ev.data or "").strip() == "[DONE]":
            labels.append("[DONE]")
            continue
        chunk = _dict(parse_json(ev.data))
        if "error" in chunk:
            labels.append("error")
            summary = replace(summary, error_type=_openai_error(_dict(chunk.get("error"))))
            continue
        labels.append(_chunk_label(chunk))
        fields |= set(chunk)
        choices = _list(chunk.get("choices"))
        delta = _dict(_dict(choices[0]).get("delta")) if choices else {}
        delta_fields |= set(delta)
        parts.extend(_openai_parts(delta))
        summary = replace(
            summary,
            model=summary.model or _str(chunk.get("model")),
            stop_reason=_finish(choices) or summary.stop_reason,
            usage_fields=_flatten_keys(chunk.get("usage")) or summary.usage_fields,
        )
    return replace(
        summary,
        blocks=_merge_text(parts),
        events=_collapse(labels),
        message_fields=frozenset(fields),
        content_fields=frozenset(delta_fields),
    )


def _openai_error(error: dict[str, Any]) -> str | None:
    return _str(error.get("type")) or _str(error.get("code"))


# --- Gemini generateContent ------------------------------------------------------------------


def _gemini_part(part: Any) -> str:
    part = _dict(part)
    if part.get("thought") is True:
        return "thought"
    for key, value in part.items():
        if key == "functionCall" and isinstance(_dict(value).get("name"), str):
            return f"functionCall({value['name']})"
        if key not in ("thought", "thoughtSignature", "metadata"):
            return str(key)
    return "?"


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    candidates = _list(data.get("candidates"))
    return _dict(candidates[0]) if candidates else {}


def _gemini_parts(data: dict[str, Any]) -> list[str]:
    return [_gemini_part(p) for p in _list(_dict(_candidate(data).get("content")).get("parts"))]


def _finish_reasons(data: dict[str, Any]) -> str | None:
    reasons = [
        str(r) for c in _list(data.get("candidates")) if (r := _dict(c).get("finishReason")) is not None
    ]
    return ",".join(reasons) or None


def _gemini_answer(base: Summary, data: dict[str, Any]) -> Summary:
    return replace(
        base,
        model=_str(data.get("modelVersion")),
        stop_reason=_finish_reasons(data),
        blocks=_merge_text(_gemini_parts(data)),
        message_fields=frozenset(data),
        content_fields=frozenset(_candidate(data)),
        usage_fields=_flatten_keys(data.get("usageMetadata")),
    )


def _gemini_stream(base: Summary, events: Iterable[sse.Event]) -> Summary:
    labels: list[str] = []
    parts: list[str] = []
    fields: set[str] = set()
    candidate_fields: set[str] = set()
    summary = base
    for ev in events:
        data = _dict(parse_json(ev.data))
        if "error" in data:
            labels.append("error")
            summary = replace(summary, error_type=_gemini_error(_dict(data.get("error"))))
            continue
        kinds = _gemini_parts(data)
        reason = _finish_reasons(data)
        labels.append("+".join(dict.fromkeys([*kinds, *(["finish"] if reason else [])])) or "empty")
        parts.extend(kinds)
        fields |= set(data)
        candidate_fields |= set(_candidate(data))
        summary = replace(
            summary,
            model=summary.model or _str(data.get("modelVersion")),
            stop_reason=reason or summary.stop_reason,
            usage_fields=_flatten_keys(data.get("usageMetadata")) or summary.usage_fields,
        )
    return replace(
        summary,
        blocks=_merge_text(parts),
        events=_collapse(labels),
        event_count=len(labels),
        message_fields=frozenset(fields),
        content_fields=frozenset(candidate_fields),
    )


def _gemini_error(error: dict[str, Any]) -> str | None:
    return _str(error.get("status")) or (str(error["code"]) if "code" in error else None)


# --- OpenAI Responses ------------------------------------------------------------------------


def _responses_item(item: Any) -> str:
    item = _dict(item)
    kind = str(item.get("type"))
    if kind in ("function_call", "custom_tool_call") and isinstance(item.get("name"), str):
        return f"{kind}({item['name']})"
    return kind


def _responses_stop(response: dict[str, Any]) -> str | None:
    status = _str(response.get("status"))
    reason = _str(_dict(response.get("incomplete_details")).get("reason"))
    return f"{status}:{reason}" if status == "incomplete" and reason else status


def _responses_answer(base: Summary, data: dict[str, Any]) -> Summary:
    output = _list(data.get("output"))
    return replace(
        base,
        model=_str(data.get("model")),
        stop_reason=_responses_stop(data),
        blocks=tuple(_responses_item(i) for i in output),
        message_fields=frozenset(data),
        content_fields=frozenset(k for i in output for k in _dict(i)),
        usage_fields=_flatten_keys(data.get("usage")),
    )


def _responses_stream(base: Summary, events: Iterable[sse.Event]) -> Summary:
    labels: list[str] = []
    final: dict[str, Any] = {}
    error_type = None
    for ev in events:
        data = _dict(parse_json(ev.data))
        labels.append(ev.event or _str(data.get("type")) or "(unnamed)")
        if data.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            final = _dict(data.get("response"))
        elif data.get("type") == "error":
            error_type = _str(data.get("code"))
    summary = _responses_answer(base, final) if final else base
    return replace(summary, events=_collapse(labels), error_type=error_type or summary.error_type)


@dataclass(frozen=True)
class FamilySummary:
    answer: Callable[[Summary, dict[str, Any]], Summary]
    stream: Callable[[Summary, Iterable[sse.Event]], Summary]
    error_type: Callable[[dict[str, Any]], str | None]
    labels: dict[str, str]  # Summary attribute → the family's word for it in a diff line


FAMILY_SUMMARIES: dict[str, FamilySummary] = {
    "anthropic.messages": FamilySummary(
        _anthropic_answer,
        _anthropic_stream,
        lambda e: str(e.get("type")) if e else None,
        {
            "stop_reason": "stop_reason",
            "blocks": "content blocks",
            "events": "SSE events",
            "message_fields": "message fields",
            "usage_fields": "usage fields",
            "delta_usage_fields": "message_delta usage fields",
        },
    ),
    "openai.chat": FamilySummary(
        _openai_answer,
        _openai_stream,
        _openai_error,
        {
            "stop_reason": "finish_reason",
            "blocks": "message parts",
            "events": "chunks",
            "message_fields": "completion fields",
            "content_fields": "message fields",
            "usage_fields": "usage fields",
        },
    ),
    "openai.responses": FamilySummary(
        _responses_answer,
        _responses_stream,
        _openai_error,
        {
            "stop_reason": "status",
            "blocks": "output items",
            "events": "events",
            "message_fields": "response fields",
            "content_fields": "output item fields",
            "usage_fields": "usage fields",
        },
    ),
    "gemini.generate": FamilySummary(
        _gemini_answer,
        _gemini_stream,
        _gemini_error,
        {
            "stop_reason": "finishReason",
            "blocks": "parts",
            "events": "events",
            "event_count": "event count",
            "message_fields": "response fields",
            "content_fields": "candidate fields",
            "usage_fields": "usageMetadata fields",
        },
    ),
}
