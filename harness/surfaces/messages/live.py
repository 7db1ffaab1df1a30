"""Live forms for Messages: structural checks that hold for any honest answer, for expectations that refer to the
scripted answer (harness/engine/live.py names them `live_*`), as chat_completions/live.py does for its surface."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.messages import reading as messages
from harness.values import json_type, short
from harness.violation import Violation


def _served(check: str, exchange: Exchange) -> tuple[dict[str, Any], Violation | None]:
    if exchange.response.status is None or not 200 <= exchange.response.status < 300:
        return {}, Violation(check, "status", "a 2xx answer", exchange.response.status, "no answer to judge")
    gateway = messages.answer_document(exchange)
    if not isinstance(gateway.document, dict) or not gateway.document:
        return {}, Violation(check, "$", "a Message", None, gateway.error or "the answer is not a Message")
    return gateway.document, None


def _blocks(message: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == kind]
        if isinstance(content, list)
        else []
    )


def check_live_usage(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`expected`: usage fields (`input_tokens`, `cache_read_input_tokens`) that must be non-negative integers."""
    message, problem = _served("live_usage", exchange)
    if problem:
        yield problem
        return
    usage = message.get("usage")
    if not isinstance(usage, dict):
        yield Violation("live_usage", "usage", "a usage object", short(usage), "the Message has no usage")
        return
    for key in expected:
        value = usage.get(
            str(key), 0 if str(key).startswith("cache_") else None
        )  # cache counts may be absent
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            if value is None:
                what = "missing"
            elif isinstance(value, int) and not isinstance(value, bool):
                what = "a negative number"
            else:
                what = "a " + json_type(value)
            yield Violation(
                "live_usage", f"usage.{key}", "a non-negative integer", short(value), f"usage.{key} is {what}"
            )


def check_live_tool_arguments(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Every tool_use block names a tool of the request and its input is valid against that tool's input_schema;
    `expected` `{name: N}`: a call must name tool N."""
    message, problem = _served("live_tool_arguments", exchange)
    if problem:
        yield problem
        return
    body = exchange.request.json if isinstance(exchange.request.json, Mapping) else {}
    schemas = {t.get("name"): t.get("input_schema") for t in body.get("tools") or [] if isinstance(t, dict)}
    calls = _blocks(message, "tool_use")
    wanted = expected.get("name") if isinstance(expected, Mapping) else None
    if wanted and not any(c.get("name") == wanted for c in calls):
        yield Violation(
            "live_tool_arguments",
            "content",
            f"a tool_use of {wanted}",
            [c.get("name") for c in calls],
            "the forced tool was not called",
        )
    for i, call in enumerate(calls):
        where = f"content[tool_use {i}]"
        if call.get("name") not in schemas:
            yield Violation(
                "live_tool_arguments",
                where + ".name",
                sorted(map(str, schemas)),
                call.get("name"),
                "a tool the request did not declare",
            )
            continue
        if not isinstance(call.get("input"), dict):
            yield Violation(
                "live_tool_arguments",
                where + ".input",
                "a JSON object",
                short(call.get("input")),
                "input is not an object",
            )
            continue
        schema = schemas[call.get("name")]
        if isinstance(schema, Mapping):
            for error in jsonschema.Draft202012Validator(dict(schema)).iter_errors(call["input"]):
                yield Violation(
                    "live_tool_arguments",
                    where + ".input",
                    "valid against the tool's input_schema",
                    short(call["input"]),
                    error.message,
                )


def check_live_response_format(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """The text of a request with `output_config.format` json_schema is JSON valid against its schema."""
    message, problem = _served("live_response_format", exchange)
    if problem:
        yield problem
        return
    body = exchange.request.json if isinstance(exchange.request.json, Mapping) else {}
    schema = reading.as_object(reading.as_object(body.get("output_config")).get("format")).get("schema")
    parsed = reading.parse_json(messages.text_of(message))
    if not parsed.ok:
        yield Violation(
            "live_response_format",
            "content",
            "JSON text",
            short(messages.text_of(message)),
            "the text is not JSON",
        )
        return
    if isinstance(schema, Mapping):
        for error in jsonschema.Draft202012Validator(dict(schema)).iter_errors(parsed.value):
            yield Violation(
                "live_response_format",
                "content",
                "valid against the schema",
                short(parsed.value),
                error.message,
            )


def check_live_text(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """The Message's text (assembled for a stream) is non-empty unless it calls tools."""
    message, problem = _served("live_text", exchange)
    if problem:
        yield problem
        return
    if not _blocks(message, "tool_use") and not messages.text_of(message):
        yield Violation(
            "live_text", "content", "non-empty text", short(message.get("content")), "the answer has no text"
        )


LIVE_CHECKS = {
    "live_usage": check_live_usage,
    "live_tool_arguments": check_live_tool_arguments,
    "live_response_format": check_live_response_format,
    "live_text": check_live_text,
}
