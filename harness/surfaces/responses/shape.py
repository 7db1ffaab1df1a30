"""`shape` for Responses: every served answer has the shape the OpenAI SDKs type (a Response object; each stream
event's data as its type needs; an `error` event its own fields). Implicit on every 2xx answer of the responses
endpoint (wire schemas openai.response and openai.response.stream.event); over the WebSocket transport, its
in-band error event by the socket's own schema (harness/surfaces/responses/websocket.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange, served_status
from harness.surfaces import reading
from harness.surfaces.messages.shape import validate
from harness.surfaces.responses import websocket
from harness.values import short
from harness.violation import Violation

ANSWER = "openai.response"
EVENT = "openai.response.stream.event"


def payload_schema(payload: reading.Payload) -> str:
    return EVENT


def check_shape(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    response = exchange.response
    if not expected or not served_status(response.status):
        return
    if not exchange.request.url.split("?", 1)[0].rstrip("/").endswith("/responses"):
        return
    if reading.is_stream(response):
        for where, payload, problem in reading.json_payloads(response.raw, "[DONE]", "shape"):
            if problem is not None:
                yield problem
                continue
            over_socket = exchange.request.transport == websocket.TRANSPORT.name
            name = (websocket.payload_schema(payload) if over_socket else None) or EVENT
            yield from validate(name, payload.json, check="shape", where=where)
        return
    parsed = reading.parse_json(response.raw)
    if not parsed.ok:
        yield Violation("shape", "$", "a Response", short(response.raw), f"body is {parsed.error}")
        return
    yield from validate(ANSWER, parsed.value, check="shape", where="$")
