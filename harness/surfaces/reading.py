"""Read-only views of a gateway's answer that hold for every surface: its JSON, its content type, its SSE
events and their decoded payloads. Every function tolerates garbage (wrong types, truncated streams): it returns
what it can and says what it could not, so checks can turn that into violations. Pure.

What a payload *means* (a chunk, an error event, the stream's sentinel) is the surface's (harness/surfaces/).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from harness import sse
from harness.exchange import Exchange, ReceivedResponse
from harness.values import short
from harness.violation import Violation, no_response


@dataclass(frozen=True)
class Parsed:
    """A JSON parse: `ok` with `value`, or not ok with `error`."""

    ok: bool
    value: Any = None
    error: str | None = None


def parse_json(raw: bytes | str) -> Parsed:
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return Parsed(True, json.loads(text))
    except UnicodeDecodeError as exc:
        return Parsed(False, error=f"not UTF-8: {exc.reason}")
    except (ValueError, RecursionError) as exc:
        return Parsed(False, error=f"not JSON: {exc}")


def content_type(response: ReceivedResponse) -> str:
    return response.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def requested_stream(exchange: Exchange) -> bool:
    """Whether this run asked for a stream: over a WebSocket always (its answer is events), else the variant's
    `stream`, else the body the harness sent."""
    if exchange.request.transport != "http":
        return True
    if "stream" in exchange.variant:
        return exchange.variant["stream"] is True
    body = exchange.request.json
    return isinstance(body, Mapping) and body.get("stream") is True


def is_stream(response: ReceivedResponse) -> bool:
    """An SSE answer: by content type, or (for gateways that mislabel it) by a body that looks like SSE."""
    if content_type(response) == "text/event-stream":
        return True
    head = response.raw.lstrip()[:16]
    looks_sse = head.startswith((b"data:", b":", b"event:", b"id:", b"retry:"))
    return looks_sse and not parse_json(response.raw).ok


@dataclass(frozen=True)
class Payload:
    """One SSE event's `data`, decoded: the stream's sentinel (`done`), a JSON value, or garbage."""

    event: sse.Event
    done: bool = False
    parsed: Parsed | None = None  # None for the sentinel and for events without data

    @property
    def json(self) -> Any:
        return self.parsed.value if self.parsed is not None and self.parsed.ok else None

    @property
    def is_object(self) -> bool:
        return self.parsed is not None and self.parsed.ok and isinstance(self.parsed.value, dict)


@dataclass(frozen=True)
class StreamView:
    decoded: sse.SseStream
    payloads: tuple[Payload, ...]

    @property
    def chunks(self) -> list[Any]:
        """The decoded `data:` JSON payloads, the sentinel and undecodable ones excluded (the `chunks` check's list)."""
        return [p.json for p in self.payloads if p.parsed is not None and p.parsed.ok]


def stream_view(raw: bytes, done: str | None = None) -> StreamView:
    """The stream's events with their data decoded; `done` is the surface's sentinel (`[DONE]`), if it has one."""
    decoded = sse.decode(raw)
    payloads: list[Payload] = []
    for event in decoded.events:
        if event.data is None:
            payloads.append(Payload(event))
        elif done is not None and event.data == done:
            payloads.append(Payload(event, done=True))
        else:
            payloads.append(Payload(event, parsed=parse_json(event.data)))
    return StreamView(decoded, tuple(payloads))


def json_payloads(
    raw: bytes, done: str | None, check: str
) -> Iterator[tuple[str, Payload, Violation | None]]:
    """A stream's data payloads for a shape check, each with where it is: a payload that is not JSON comes with
    the violation that says so (the sentinel and events without data are skipped)."""
    for payload in stream_view(raw, done).payloads:
        if payload.done or payload.event.data is None:
            continue
        where = f"stream[{payload.event.index}]"
        problem = None
        if payload.parsed is None or not payload.parsed.ok:
            problem = Violation(check, where, "a JSON payload", short(payload.event.data), "data is not JSON")
        yield where, payload, problem


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for reading garbage without type errors)."""
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class GatewayAnswer:
    """The gateway's answer as one JSON document: the body, or the stream as the surface assembles it."""

    stream: bool
    document: Any  # the JSON body or the assembled answer; None when the body is not JSON
    error: str | None = None  # why there is no document
    view: StreamView | None = None


def answer(exchange: Exchange, assemble: Callable[[StreamView], Any], done: str | None) -> GatewayAnswer:
    """The answer document of an exchange: a stream assembled by the surface's `assemble`, else the JSON body."""
    response = exchange.response
    if is_stream(response):
        view = stream_view(response.raw, done)
        return GatewayAnswer(True, assemble(view), view=view)
    if response.status is None and not response.raw:
        return GatewayAnswer(
            False, None, error=f"no response ({response.transport_error or 'nothing received'})"
        )
    parsed = parse_json(response.raw)
    if not parsed.ok:
        return GatewayAnswer(False, None, error=f"body is {parsed.error}")
    return GatewayAnswer(False, parsed.value)


def mark_content(message: dict[str, Any], marker: str) -> None:
    """Put `marker` at the start of a message's text, in place: a string content is prefixed; in a list of parts
    (Chat Completions) or blocks (Messages), both `{"type": "text", "text": …}`, the first text one is, or a text
    one is appended (earlier indexes stay as they are); no content becomes the marker."""
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = f"{marker} {content}" if content else marker
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                part["text"] = f"{marker} {part['text']}"
                break
        else:
            content.append({"type": "text", "text": marker})
    elif content is None:
        message["content"] = marker


def grow_content(message: dict[str, Any], token: str) -> bool:
    """Append " token" to a message's text (a string content or its first text part), in place; False: no text."""
    if isinstance(message.get("content"), str):
        message["content"] += " " + token
        return True
    for part in message.get("content") or []:
        if isinstance(part, dict) and part.get("type") == "text":
            part["text"] += " " + token
            return True
    return False


def stream_or_violation(check: str, exchange: Exchange, done: str | None = None) -> StreamView | Violation:
    """The answer's stream for a stream check (`done`: the surface's sentinel), or the violation that there is none:
    no response at all, or an answer that is not an event stream."""
    response = exchange.response
    missing = no_response(check, exchange)
    if missing and not response.raw:
        return missing
    if not is_stream(response):
        actual = {"status": response.status, "content-type": response.headers.get("content-type"),
                  "body": short(response.raw, 120)}  # fmt: skip
        return Violation(
            check, "response", "an SSE stream (text/event-stream)", actual, "the answer is not a stream"
        )
    return stream_view(response.raw, done)


def error_document(
    exchange: Exchange,
    errors: Callable[[StreamView], list[Payload]],
    done: str | None,
    event: str,
    envelope: str,
) -> tuple[Any, str] | Violation:
    """The error document of an answer and where it was found: the stream's last error event (`errors` finds
    them, `event` names one for a message), or the JSON body (`envelope` names the shape for a message)."""
    if is_stream(exchange.response):
        found = errors(stream_view(exchange.response.raw, done))
        if not found:
            return Violation("error", "stream", event, None, "the stream carries no error event")
        return found[-1].json, f"stream[{found[-1].event.index}]"
    parsed = parse_json(exchange.response.raw)
    if not parsed.ok:
        return Violation("error", "$", envelope, short(exchange.response.raw), f"body is {parsed.error}")
    return parsed.value, "$"
