"""What to send: a pure plan built from the answer (cassette or fault) and the case's upstream options."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from harness.cassette.document import Cassette

HOP_BY_HOP = frozenset({"transfer-encoding", "connection", "keep-alive", "content-length", "date", "server"})
DEFAULT_STREAM_ERROR: Mapping[str, Any] = {"type": "overloaded_error", "message": "Overloaded"}
BIG_FILE_BYTES = 10 * 1024 * 1024 + 1  # over "10 MB" whichever way a doc counts it

# Anthropic's error type for a status (wire-reference §1.8), used for fault bodies given without one.
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


# What to send: a pure plan built from the answer and the case's upstream options


@dataclass(frozen=True)
class PlannedAnswer:
    status: int
    headers: tuple[tuple[str, str], ...]  # lower-case names, hop-by-hop removed
    body: bytes
    sse: bool
    cassette: str | None = None
    interaction: int | None = None


@dataclass(frozen=True)
class Plan:
    status: int
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[tuple[float, bytes], ...]  # (seconds to wait before, bytes)
    first_byte_delay: float = 0.0
    abort: bool = False  # close the connection after the chunks instead of finishing the body
    fault: Mapping[str, Any] | None = None  # the fault options actually applied

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)


def as_asked(answer: PlannedAnswer, kind: str | None, request: Any) -> PlannedAnswer:
    """An OpenAI-family stream as OpenAI sends it for this request: the `choices: []` usage chunk and the
    chunks' `usage` keys only when the request asked for them (`stream_options.include_usage`; OpenAI's
    chunk object: usage is "only present when you set stream_options"), and the `obfuscation` padding unless
    the request turned it off (`stream_options.include_obfuscation: false`). A cassette recorded with them would
    otherwise hand a gateway that never asked a chunk the provider would not have sent (audit D5)."""
    if kind == "openai.responses" and answer.status == 200:
        return _responses_as_asked(answer, request)
    if kind != "openai.chat" or not answer.sse or answer.status != 200:
        return answer
    options = request.get("stream_options") if isinstance(request, Mapping) else None
    options = options if isinstance(options, Mapping) else {}
    drop = set()
    if options.get("include_usage") is not True:
        drop.add("usage")
    if options.get("include_obfuscation") is False:
        drop.add("obfuscation")
    if not drop:
        return answer
    kept: list[bytes] = []
    changed = False
    for event in split_events(answer.body):
        head, sep, rest = event.partition(b"data:")
        try:
            chunk = json.loads(rest) if sep and rest.strip() and rest.strip() != b"[DONE]" else None
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict) or not drop & set(chunk):
            kept.append(event)
            continue
        changed = True
        if "usage" in drop and chunk.get("choices") == []:
            continue  # the usage chunk itself
        for key in drop:
            chunk.pop(key, None)
        ending = event[len(event.rstrip(b"\r\n")) :]
        kept.append(head + b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + ending)
    return replace(answer, body=b"".join(kept)) if changed else answer


# The request parameters a Response object repeats (OpenAI's Response object: "instructions", "max_output_tokens",
# "metadata", … as the request set them, `store` true unless it said false).
RESPONSES_ECHOED = (
    "instructions", "max_output_tokens", "metadata", "parallel_tool_calls", "previous_response_id", "store",
    "temperature", "top_p", "tool_choice", "tools", "text", "truncation", "safety_identifier", "prompt_cache_key",
    "reasoning", "user", "service_tier", "top_logprobs", "max_tool_calls",
)  # fmt: skip


def _echo(response: Any, request: Mapping[str, Any]) -> Any:
    if not isinstance(response, dict):
        return response
    return {**response, **{k: request[k] for k in RESPONSES_ECHOED if k in request}}


def _responses_as_asked(answer: PlannedAnswer, request: Any) -> PlannedAnswer:
    """A Responses answer as OpenAI gives it for this request: the Response object (the body, or each event's
    `response`) repeats the request's parameters. A cassette recorded for another request would otherwise tell a
    pass-through gateway's client settings it never asked for (`store: true` after `store: false`)."""
    if not isinstance(request, Mapping) or not any(k in request for k in RESPONSES_ECHOED):
        return answer
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    if not answer.sse:
        try:
            body = json.loads(answer.body)
        except ValueError:
            return answer
        return replace(answer, body=json.dumps(_echo(body, request), **compact).encode())  # type: ignore[arg-type]
    kept: list[bytes] = []
    for event in split_events(answer.body):
        head, sep, rest = event.partition(b"data:")
        try:
            data = json.loads(rest) if sep and rest.strip() else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("response"), dict):
            kept.append(event)
            continue
        data["response"] = _echo(data["response"], request)
        ending = event[len(event.rstrip(b"\r\n")) :]
        kept.append(head + b"data: " + json.dumps(data, **compact).encode() + ending)  # type: ignore[arg-type]
    return replace(answer, body=b"".join(kept))


def split_events(body: bytes) -> list[bytes]:
    """SSE events with their terminating blank line; a trailing partial event is kept as is."""
    events: list[bytes] = []
    pos = 0
    for m in re.finditer(rb"\r?\n\r?\n", body):
        events.append(body[pos : m.end()])
        pos = m.end()
    if pos < len(body):
        events.append(body[pos:])
    return events


# Gemini's canonical status for an HTTP status (google.rpc.Code names, as the Gemini API sends them).
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _gemini_error(status: int, message: str) -> dict[str, Any]:
    code = _GEMINI_STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
    return {"error": {"code": status, "message": message, "status": code}}


def error_event(kind: str | None, error: Mapping[str, Any], sequence: int = 0) -> bytes:
    """A mid-stream error in the provider's own framing (Anthropic `event: error`, OpenAI and Gemini a data line,
    OpenAI Responses its `error` event as api.openai.com sends it live: the error envelope's fields under `error`,
    `{"type": "error", "error": {"type", "code", "message", "param"}, "sequence_number"}` — captured from the live
    API in vercel/ai#20022, Effect-TS/effect#7262 and zendev-sh/goai#88, where the API reference documents them
    flat; openai-python and openai-node raise it as an APIError. `sequence` is its sequence_number, the count of
    events before it)."""
    if kind == "openai.responses":
        inner = {
            "type": "server_error",
            "code": error.get("code") or "server_error",
            "message": str(error.get("message", "")),
            "param": None,
        }
        data = {"type": "error", "error": inner, "sequence_number": sequence}
        return b"event: error\ndata: " + json.dumps(data).encode() + b"\n\n"
    if kind == "openai.chat":
        err = {"message": error.get("message", ""), "type": error.get("type"), "param": None, "code": None}
        return b"data: " + json.dumps({"error": err}).encode() + b"\n\n"
    if kind == "gemini.generate":
        code = error.get("code")
        body = _gemini_error(code if isinstance(code, int) else 503, str(error.get("message", "")))
        return b"data: " + json.dumps(body).encode() + b"\r\n\r\n"
    return b"event: error\ndata: " + json.dumps({"type": "error", "error": dict(error)}).encode() + b"\n\n"


def error_body(
    kind: str | None,
    status: int,
    message: str,
    error_type: str | None = None,
    *,
    param: str | None = None,
    code: str | None = None,
) -> bytes:
    """A provider-style error envelope: OpenAI's on its chat and Responses endpoints, Gemini's on generateContent,
    Anthropic's elsewhere."""
    if kind == "gemini.generate":
        return json.dumps(_gemini_error(status, message)).encode()
    etype = error_type or _ANTHROPIC_ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    if kind in ("openai.chat", "openai.responses"):
        return json.dumps(
            {"error": {"message": message, "type": etype, "param": param, "code": code}}
        ).encode()
    return json.dumps({"type": "error", "error": {"type": etype, "message": message}}).encode()


def fault_answer(kind: str | None, fault: Mapping[str, Any]) -> PlannedAnswer:
    status = int(fault["status"])
    body = fault.get("body")
    headers = {k.lower(): str(v) for k, v in (fault.get("headers") or {}).items()}
    if body is None:
        data = error_body(kind, status, f"gateway-conformance replay: injected {status}")
        ctype = "application/json"
    elif isinstance(body, str):
        data = body.encode("utf-8")
        try:
            json.loads(body)
            ctype = "application/json"
        except ValueError:
            ctype = "text/plain; charset=utf-8"
    else:
        data = json.dumps(body).encode()
        ctype = "application/json"
    headers.setdefault("content-type", ctype)
    return PlannedAnswer(
        status=status,
        headers=tuple(headers.items()),
        body=data,
        sse=headers["content-type"].startswith("text/event-stream"),
    )


def _recut(pieces: list[tuple[float, bytes]], sizes: list[int]) -> list[tuple[float, bytes]]:
    """Re-cut the byte stream at the given sizes (cycled), keeping each delay at its byte offset."""
    out: list[tuple[float, bytes]] = []
    i = 0
    for delay, data in pieces:
        pending_delay = delay
        pos = 0
        while pos < len(data):
            size = sizes[i % len(sizes)]
            i += 1
            out.append((pending_delay, data[pos : pos + size]))
            pending_delay = 0.0
            pos += size
    return out


def _sse_pieces(
    body: bytes,
    upstream: Mapping[str, Any],
    fault: Mapping[str, Any],
    kind: str | None,
    applied: dict[str, Any],
) -> list[tuple[float, bytes]]:
    """A stream's events as (delay, bytes): a mid-stream error injected, paced, paused."""
    events = split_events(body)
    if "error_after_events" in fault:
        n = int(fault["error_after_events"])
        err = fault.get("error") or DEFAULT_STREAM_ERROR
        events = [*events[:n], error_event(kind, err, n)]
        applied["error_after_events"] = n
        applied["error"] = err
    pacing = float(upstream.get("pacing") or 0)
    pause = fault.get("pause_after_events")
    pieces = []
    for i, ev in enumerate(events):
        delay = pacing if i > 0 else 0.0
        if pause and i == int(pause["events"]):
            delay += float(pause["seconds"])
            applied["pause_after_events"] = pause
        pieces.append((delay, ev))
    if pause and int(pause["events"]) >= len(events):  # pause after the last event, before the end
        pieces.append((float(pause["seconds"]), b""))
        applied["pause_after_events"] = pause
    return pieces


def _cut_at(pieces: list[tuple[float, bytes]], limit: int) -> list[tuple[float, bytes]]:
    """The pieces up to `limit` bytes in all (drop_after_bytes)."""
    kept: list[tuple[float, bytes]] = []
    sent = 0
    for delay, data in pieces:
        if sent >= limit:
            break
        take = data[: limit - sent]
        kept.append((delay, take))
        sent += len(take)
    return kept


def plan_answer(answer: PlannedAnswer, upstream: Mapping[str, Any], kind: str | None) -> Plan:
    fault = dict(upstream.get("fault") or {})
    applied: dict[str, Any] = {}
    headers = dict(answer.headers)
    if "status" not in fault and fault.get("headers"):
        headers.update({k.lower(): str(v) for k, v in fault["headers"].items()})
        applied["headers"] = fault["headers"]
    elif "status" in fault:
        applied.update({k: fault[k] for k in ("status", "body", "headers") if k in fault})

    body = answer.body
    pieces = _sse_pieces(body, upstream, fault, kind, applied) if answer.sse else [(0.0, body)]
    rechunk = upstream.get("rechunk")
    if rechunk:
        pieces = _recut(pieces, [1] if rechunk == "bytewise" else [int(s) for s in rechunk])
        gap = float(upstream.get("rechunk_gap") or 0)
        if gap:
            # A pause before every piece but the first, so each reaches the gateway as a read of its own.
            pieces = [(d + (gap if i else 0.0), data) for i, (d, data) in enumerate(pieces)]
    abort = "drop_after_bytes" in fault
    if abort:
        pieces = _cut_at(pieces, int(fault["drop_after_bytes"]))
        applied["drop_after_bytes"] = int(fault["drop_after_bytes"])

    if answer.sse:
        headers.pop("content-length", None)  # chunked: the server frames each piece
    else:
        # The full length even when dropping: the client then sees a body cut short.
        headers["content-length"] = str(len(body))
    delay = float(fault.get("first_byte_delay") or 0)
    if delay:
        applied["first_byte_delay"] = delay
    return Plan(
        status=answer.status,
        headers=tuple(headers.items()),
        chunks=tuple(pieces),
        first_byte_delay=delay,
        abort=abort,
        fault=applied or None,
    )


def cassette_answer(cassette: Cassette, index: int) -> PlannedAnswer:
    resp = cassette.interactions[index].response
    headers = tuple((k, v) for k, values in resp.headers.items() if k not in HOP_BY_HOP for v in values)
    return PlannedAnswer(
        status=resp.status,
        headers=headers,
        body=resp.body,
        sse=resp.is_sse,
        cassette=cassette.name,
        interaction=index,
    )


def echo_model(answer: PlannedAnswer, kind: str | None, request: Any, path: str) -> PlannedAnswer:
    """The answer naming the model the request asked for, as a provider answers with the model it served (upstream
    option `echo_model`): a JSON answer's `model` (Gemini: `modelVersion`), and in a stream every event's `model`,
    `message.model` or `response.model`. A cassette recorded for one model otherwise tells a gateway that reads the
    answer's model (to price it) a model it never asked for."""
    asked = request.get("model") if isinstance(request, Mapping) else None
    if kind == "gemini.generate":
        found = re.search(r"/models/([^/:]+):", path)
        asked = found.group(1) if found else asked
    if not isinstance(asked, str) or answer.status != 200:
        return answer

    def named(data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in ("model", "modelVersion"):
            if isinstance(out.get(key), str):
                out[key] = asked
        for inner in ("message", "response"):
            if isinstance(out.get(inner), dict) and isinstance(out[inner].get("model"), str):
                out[inner] = {**out[inner], "model": asked}
        return out

    compact: dict[str, Any] = {"separators": (",", ":"), "ensure_ascii": False}
    if not answer.sse:
        try:
            body = json.loads(answer.body)
        except ValueError:
            return answer
        return replace(answer, body=json.dumps(named(body), **compact).encode())
    kept: list[bytes] = []
    for event in split_events(answer.body):
        head, sep, rest = event.partition(b"data:")
        try:
            data = json.loads(rest) if sep and rest.strip() and rest.strip() != b"[DONE]" else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or named(data) == data:
            kept.append(event)
            continue
        ending = event[len(event.rstrip(b"\r\n")) :]
        kept.append(head + b"data: " + json.dumps(named(data), **compact).encode() + ending)
    return replace(answer, body=b"".join(kept))
