"""`shape` for Messages: every served answer has the shape the Anthropic SDKs parse (a Message; each stream
event's data as its type needs; an error event as the error envelope). Implicit on every 2xx answer of the
messages endpoint; other endpoints (count_tokens, models) are judged by their rules' own checks."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema

from harness.exchange import Exchange
from harness.paths import schema_path
from harness.surfaces import reading
from harness.surfaces.messages import reading as messages
from harness.values import short
from harness.violation import Violation

_BUILDING = threading.Lock()


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_path(name).read_text(encoding="utf-8")))


def validate(name: str, document: Any, *, check: str, where: str) -> Iterator[Violation]:
    """The document's violations of wire schema `name` (specs/schema/wire), at most 20."""
    with _BUILDING:
        validator = _validator(name)
    for n, error in enumerate(sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))):
        if n == 20:
            return
        path = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        yield Violation(check, path, name, short(error.instance), f"{name}: {error.message}")


def payload_schema(payload: reading.Payload) -> str:
    return "anthropic.error" if messages.is_error(payload) else "anthropic.message.stream.event"


def check_shape(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    response = exchange.response
    if not expected or response.status is None or not 200 <= response.status < 300:
        return
    if not exchange.request.url.split("?", 1)[0].rstrip("/").endswith("/messages"):
        return
    if reading.is_stream(response):
        for where, payload, problem in reading.json_payloads(response.raw, None, "shape"):
            if problem is not None:
                yield problem
                continue
            yield from validate(payload_schema(payload), payload.json, check="shape", where=where)
        return
    parsed = reading.parse_json(response.raw)
    if not parsed.ok:
        yield Violation("shape", "$", "a Message", short(response.raw), f"body is {parsed.error}")
        return
    yield from validate("anthropic.message", parsed.value, check="shape", where="$")
