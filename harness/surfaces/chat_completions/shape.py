"""`shape`: the generic check every served chat answer gets, in replay and in live mode alike (one judgment for
both modes, issue 20): a 2xx answer of the chat endpoint is a chat.completion, or a stream of
chat.completion.chunk payloads (and error payloads), as the OpenAI SDK reads them.

It accepts what every profile's doc allows — the rules say what a doc promises beyond that: a chunk may omit
`finish_reason` and a mid-stream error payload `param` and `code` (relay's doc: unset fields are omitted, and its
own example omits `finish_reason`; the SDK's types default them to null), though a value given must be one the
SDK knows (never `finish_reason: ""`). A rule with its own
`schema` (or an error expectation) is judged by that instead. Pure.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema

from harness.exchange import Exchange
from harness.paths import schema_path
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat
from harness.values import short
from harness.violation import Violation

MAX_ERRORS = 5


@cache
def _validator(name: str, lenient_finish: bool) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    if lenient_finish:  # what a doc that omits unset fields allows (relay): null-able keys may be absent
        schema = copy.deepcopy(schema)
        if name == "openai.error":
            error = schema["properties"]["error"]
            error["required"] = [k for k in error["required"] if k not in ("param", "code")]
        else:
            choice = schema["$defs"]["choice"]
            choice["required"] = [k for k in choice["required"] if k != "finish_reason"]
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)  # type: ignore[no-any-return]


def _chat_endpoint(exchange: Exchange) -> bool:
    path = exchange.request.url.split("?", 1)[0].rstrip("/")
    return path.endswith("/chat/completions")


_BUILDING = threading.Lock()  # rules run on several threads: one builds a validator, the others wait for it


def _violations(name: str, document: Any, where: str, lenient: bool) -> Iterator[Violation]:
    with _BUILDING:
        validator = _validator(name, lenient)
    errors = sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors[:MAX_ERRORS]:
        path = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        best = jsonschema.exceptions.best_match(error.context) if error.context else error
        yield Violation("shape", path, f"{name} shape", short(error.instance), f"{name}: {best.message}")


def check_shape(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """A served answer of the chat endpoint has the SDK's shape; other answers are the status check's."""
    response = exchange.response
    if not expected or response.status is None or not 200 <= response.status < 300:
        return
    if not _chat_endpoint(exchange):
        return
    if reading.is_stream(response):
        for payload in reading.stream_view(response.raw, chat.DONE).payloads:
            if payload.done:
                continue
            where = f"stream[{payload.event.index}]"
            if payload.parsed is None or not payload.parsed.ok:
                yield Violation(
                    "shape", where, "a JSON payload", short(payload.event.data), "data is not JSON"
                )
                continue
            name = "openai.error" if chat.is_error(payload) else "openai.chat.completion.chunk"
            yield from _violations(name, payload.json, where, lenient=True)
        return
    parsed = reading.parse_json(response.raw)
    if not parsed.ok:
        yield Violation("shape", "$", "a chat.completion", short(response.raw), f"body is {parsed.error}")
        return
    yield from _violations("openai.chat.completion", parsed.value, "$", lenient=False)


__all__ = ["check_shape"]
