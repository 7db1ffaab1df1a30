"""Live forms for Responses: structural checks that hold for any honest answer, for expectations that refer to the
scripted answer of the replay upstream (which a real model never gives). Run only in live mode (harness/engine/
live.py); pure like every check. The Response read is the body, or a stream's final response."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema

from harness.exchange import Exchange, served_status
from harness.surfaces import reading
from harness.surfaces.responses import reading as responses
from harness.values import short
from harness.violation import Violation


def _served(check: str, exchange: Exchange) -> tuple[dict[str, Any], Violation | None]:
    if not served_status(exchange.response.status):
        return {}, Violation(check, "status", "a 2xx answer", exchange.response.status, "no answer to judge")
    gateway = responses.answer_document(exchange)
    if not isinstance(gateway.document, dict) or not gateway.document:
        return {}, Violation(check, "$", "a Response", None, gateway.error or "the answer is no Response")
    return gateway.document, None


def check_live_usage(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`expected`: usage paths that must be non-negative integers; total_tokens, with both parts, their sum."""
    document, problem = _served("live_usage", exchange)
    if problem:
        yield problem
        return
    usage = document.get("usage")
    if not isinstance(usage, dict):
        yield Violation("live_usage", "usage", "a usage object", short(usage), "the response has no usage")
        return
    for key in expected:
        value: Any = usage
        for part in str(key).split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            yield Violation("live_usage", f"usage.{key}", "a non-negative integer", short(value),
                            f"usage.{key} is {short(value)}")  # fmt: skip
    found = [usage.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")]
    parts: list[int] = [v for v in found if isinstance(v, int) and not isinstance(v, bool)]
    if len(parts) == 3 and parts[0] + parts[1] != parts[2]:
        yield Violation("live_usage", "usage.total_tokens", parts[0] + parts[1], parts[2],
                        f"total_tokens {parts[2]} != input_tokens {parts[0]} + output_tokens {parts[1]}")  # fmt: skip


def check_live_tool_arguments(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Every function_call item names a tool of the request, its arguments a JSON object valid against that tool's
    `parameters`. `expected`: true, or `{name: N}` — a call must name tool N."""
    document, problem = _served("live_tool_arguments", exchange)
    if problem:
        yield problem
        return
    body = exchange.request.json if isinstance(exchange.request.json, Mapping) else {}
    schemas = {
        tool["name"]: tool.get("parameters") or {"type": "object"}
        for tool in body.get("tools") or []
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)
    }
    calls = [
        i for i in document.get("output") or [] if isinstance(i, dict) and i.get("type") == "function_call"
    ]
    wanted = expected.get("name") if isinstance(expected, Mapping) else None
    if wanted is not None and not any(c.get("name") == wanted for c in calls):
        yield Violation("live_tool_arguments", "output", wanted, [c.get("name") for c in calls],
                        f"no function_call names {wanted!r}")  # fmt: skip
    for i, call in enumerate(calls):
        where = f"output[function_call {i}]"
        if call.get("name") not in schemas:
            yield Violation("live_tool_arguments", where + ".name", sorted(schemas), call.get("name"),
                            f"{call.get('name')!r} is no tool of the request")  # fmt: skip
            continue
        arguments = call.get("arguments")
        parsed = reading.parse_json(arguments) if isinstance(arguments, str) else reading.Parsed(False, None)
        if not parsed.ok or not isinstance(parsed.value, dict):
            yield Violation("live_tool_arguments", where + ".arguments", "a JSON object", short(arguments),
                            "arguments are not a JSON object")  # fmt: skip
            continue
        for error in jsonschema.Draft202012Validator(schemas[call["name"]]).iter_errors(parsed.value):
            yield Violation("live_tool_arguments", where + ".arguments", "valid against the tool's parameters",
                            short(parsed.value), error.message)  # fmt: skip


LIVE_CHECKS = {"live_usage": check_live_usage, "live_tool_arguments": check_live_tool_arguments}
