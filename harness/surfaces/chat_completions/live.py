"""Live forms: structural checks that hold for any honest answer, for expectations that refer to the scripted
answer of the replay upstream (which a real model never gives). Run only in live mode (harness/engine/live.py names
them `live_*` in the live expectations; registered in harness/checks/__init__.py); pure like every check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat
from harness.values import short
from harness.violation import Violation


def _served(check: str, exchange: Exchange) -> tuple[reading.GatewayAnswer | None, Violation | None]:
    if exchange.response.status is None or not 200 <= exchange.response.status < 300:
        return None, Violation(
            check, "status", "a 2xx answer", exchange.response.status, "no answer to judge"
        )
    gateway = chat.answer_document(exchange)
    if not isinstance(gateway.document, dict):
        return None, Violation(check, "$", "a completion", None, gateway.error or "the answer is not JSON")
    return gateway, None


def _served_message(check: str, exchange: Exchange) -> tuple[dict[str, Any], Violation | None]:
    """The first choice's message of a served answer, or the violation that there is none to judge."""
    gateway, problem = _served(check, exchange)
    if problem or gateway is None:
        return {}, problem
    return reading.as_object(reading.as_object(chat.first_choice(gateway.document)).get("message")), None


def check_live_usage(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`expected`: usage paths (`prompt_tokens`, `prompt_tokens_details.cached_tokens`) that must be non-negative
    integers; `total_tokens`, when present with both parts, must be their sum."""
    gateway, problem = _served("live_usage", exchange)
    if problem or gateway is None:
        yield problem  # type: ignore[misc]
        return
    usage = gateway.document.get("usage")
    if not isinstance(usage, dict):
        yield Violation(
            "live_usage", "usage", "a usage object", short(usage), "the answer has no usage object"
        )
        return
    for key in expected:
        value: Any = usage
        for part in str(key).split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            yield Violation(
                "live_usage",
                f"usage.{key}",
                "a non-negative integer",
                short(value),
                f"usage.{key} is {short(value)}",
            )
    parts: list[int] = [
        v
        for v in (usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))
        if isinstance(v, int) and not isinstance(v, bool)
    ]
    if len(parts) == 3 and parts[0] + parts[1] != parts[2]:
        yield Violation(
            "live_usage",
            "usage.total_tokens",
            parts[0] + parts[1],
            parts[2],
            f"total_tokens {parts[2]} != prompt_tokens {parts[0]} + completion_tokens {parts[1]}",
        )


def _tool_schemas(exchange: Exchange) -> dict[str, Any]:
    body = exchange.request.json if isinstance(exchange.request.json, Mapping) else {}
    out: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            out[function["name"]] = function.get("parameters") or {"type": "object"}
    return out


def check_live_tool_arguments(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Every tool call names a tool of the request, and its arguments are a JSON object valid against that
    tool's `parameters`. `expected`: true, or `{name: N}` — a call must name tool N."""
    message, problem = _served_message("live_tool_arguments", exchange)
    if problem:
        yield problem
        return
    raw_calls = message.get("tool_calls")
    calls: list[Any] = [reading.as_object(c) for c in raw_calls] if isinstance(raw_calls, list) else []
    schemas = _tool_schemas(exchange)
    wanted = expected.get("name") if isinstance(expected, Mapping) else None
    if wanted is not None and not any(
        reading.as_object(c.get("function")).get("name") == wanted for c in calls
    ):
        names = [reading.as_object(c.get("function")).get("name") for c in calls]
        yield Violation("live_tool_arguments", "tool_calls", wanted, names, f"no tool call names {wanted!r}")
    for i, call in enumerate(calls):
        function = reading.as_object(reading.as_object(call).get("function"))
        where = f"tool_calls[{i}].function"
        name = function.get("name")
        if name not in schemas:
            yield Violation(
                "live_tool_arguments",
                where + ".name",
                sorted(schemas),
                name,
                f"{name!r} is no tool of the request",
            )
            continue
        arguments = function.get("arguments")
        parsed = reading.parse_json(arguments) if isinstance(arguments, str) else reading.Parsed(False, None)
        if not parsed.ok or not isinstance(parsed.value, dict):
            yield Violation(
                "live_tool_arguments",
                where + ".arguments",
                "a JSON object",
                short(arguments),
                "arguments are not a JSON object",
            )
            continue
        for error in jsonschema.Draft202012Validator(schemas[name]).iter_errors(parsed.value):
            yield Violation(
                "live_tool_arguments",
                where + ".arguments",
                "valid against the tool's parameters",
                short(parsed.value),
                error.message,
            )


def check_live_response_format(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """The text answer of a request with `response_format` json_schema (json_object) is JSON valid against it."""
    message, problem = _served_message("live_response_format", exchange)
    if problem:
        yield problem
        return
    body = exchange.request.json if isinstance(exchange.request.json, Mapping) else {}
    fmt = reading.as_object(body.get("response_format"))
    content = message.get("content")
    parsed = reading.parse_json(content) if isinstance(content, str) else reading.Parsed(False, None)
    if not parsed.ok:
        yield Violation(
            "live_response_format", "message.content", "JSON text", short(content), "the content is not JSON"
        )
        return
    schema = reading.as_object(fmt.get("json_schema")).get("schema")
    if isinstance(schema, Mapping):
        for error in jsonschema.Draft202012Validator(dict(schema)).iter_errors(parsed.value):
            yield Violation(
                "live_response_format",
                "message.content",
                "valid against the response_format schema",
                short(parsed.value),
                error.message,
            )
    elif not isinstance(parsed.value, dict):
        yield Violation(
            "live_response_format",
            "message.content",
            "a JSON object",
            short(parsed.value),
            "not a JSON object",
        )


def check_live_text(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """The answer's text (assembled for a stream) is a string; non-empty unless it carries tool calls."""
    message, problem = _served_message("live_text", exchange)
    if problem:
        yield problem
        return
    content = message.get("content")
    if message.get("tool_calls"):
        return
    if not isinstance(content, str) or not content:
        yield Violation(
            "live_text", "message.content", "non-empty text", short(content), "the answer has no text"
        )


LIVE_CHECKS = {
    "live_usage": check_live_usage,
    "live_tool_arguments": check_live_tool_arguments,
    "live_response_format": check_live_response_format,
    "live_text": check_live_text,
}
