"""Responses over a WebSocket (OpenAI's WebSocket mode guide; Open Responses specification, "WebSocket Transport"):
a transport variant of the Responses surface, not another surface. The socket is the same `/v1/responses` resource
upgraded; a turn starts with a `response.create` message — the body of `POST /v1/responses` minus the fields of the
HTTP transport (`stream`, `stream_options`) — and its answer is the same stream events, one message each, ending
with the terminal event, or an in-band `error` event (`{"type": "error", "status", "error": {...}}`, the
envelope openai-python types as `ResponseWsError`, whose `sequence_number` is optional). Pure."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from harness.surfaces.base import Transport
from harness.surfaces.messages.shape import validate
from harness.surfaces.reading import Payload
from harness.surfaces.responses import envelope, reading
from harness.violation import Violation

CREATE = "response.create"
ERROR_SCHEMA = "openai.response.websocket.error"
# Fields of the HTTP transport that a WebSocket turn does not send ("stream is implicit over WebSocket";
# the Open Responses specification: "MUST NOT be sent on WebSocket requests").
HTTP_ONLY = ("stream", "stream_options")


def client_event(body: Mapping[str, Any]) -> dict[str, Any]:
    """The message that starts a turn: `response.create` with the request's fields."""
    return {"type": CREATE, **{k: v for k, v in body.items() if k not in HTTP_ONLY}}


def ends_turn(message: Any) -> bool:
    """A terminal event, an `error` event (the turn failed in-band), or a `[DONE]` text."""
    if message == "[DONE]":
        return True
    kind = message.get("type") if isinstance(message, dict) else None
    return kind in reading.TERMINAL or kind == reading.ERROR


def payload_schema(payload: Payload) -> str | None:
    """The socket's own error envelope for an `error` event that carries its fields under `error` (without a
    `sequence_number` when the turn failed before its stream began); every other event is the HTTP stream's."""
    data = payload.json
    if isinstance(data, dict) and data.get("type") == reading.ERROR and "error" in data:
        return ERROR_SCHEMA
    return None


def envelope_violations(document: Any, where: str, check: str = "error") -> Iterator[Violation]:
    """An in-band error event by the socket's own envelope (the error's message and type strings; its code and
    param, as openai-python types them, optional); any other error document (a refused upgrade's body) by the
    surface's."""
    if isinstance(document, dict) and document.get("type") == reading.ERROR and "error" in document:
        yield from validate(ERROR_SCHEMA, document, check=check, where=where)
        return
    yield from envelope.envelope_violations(document, where, check)


TRANSPORT = Transport(
    name="websocket",
    client_event=client_event,
    ends_turn=ends_turn,
    payload_schema=payload_schema,
    envelope=envelope_violations,
)
