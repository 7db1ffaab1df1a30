"""Checks on what the client got, the same for every surface: status, headers, body, JSON, the error's fields,
schema, usage, chunks. What an answer, a stream payload and an error envelope are is the surface's
(harness/surfaces/)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from harness.checks import answer, expr, views
from harness.checks.matchers import check_path_assertions, match_values
from harness.checks.refs import References
from harness.checks.schemas import validate
from harness.errors import ExprError, RefError
from harness.exchange import Exchange, served_status
from harness.surfaces import reading, surface_of
from harness.values import json_equal, json_type, short
from harness.violation import Violation, no_response

_ERROR_FIELDS = ("type", "code", "param", "message")


def status_allowed(allowed: list[Any], status: int) -> bool:
    """`status` is one of the integers, or in one of the classes (`"4xx"`: any client error)."""
    for option in allowed:
        if isinstance(option, str) and len(option) == 3 and option.endswith("xx") and option[0].isdigit():
            if status // 100 == int(option[0]):
                return True
        elif option == status:
            return True
    return False


def check_status(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    allowed = expected if isinstance(expected, list) else [expected]
    response = exchange.response
    if response.status is None:
        yield Violation(
            "status",
            "status",
            expected,
            None,
            f"no response: {response.transport_error or 'nothing received'}; "
            f"{len(response.raw)} bytes received: {short(response.raw, 120)!r}",
        )
    elif not status_allowed(allowed, response.status):
        yield Violation(
            "status",
            "status",
            expected,
            response.status,
            f"status {response.status}; body: {short(response.raw, 200)}",
        )


def _header_values(headers: Mapping[str, str], name: str) -> list[str]:
    """The values of one header; `*` stands for every header, each as its `name: value` line."""
    if name == "*":
        return [f"{key.lower()}: {value}" for key, value in headers.items()]
    wanted = name.lower()
    return [value for key, value in headers.items() if key.lower() == wanted]


def check_headers(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("headers", exchange)
    if missing:
        yield missing
        return
    refs = References(exchange)
    for name, matcher in expected.items():
        yield from match_values(
            matcher,
            _header_values(exchange.response.headers, name),
            check="headers",
            path=name.lower(),
            refs=refs,
        )


def check_body(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("body", exchange)
    if missing:
        yield missing
        return
    text = exchange.response.raw.decode("utf-8", errors="replace")
    yield from match_values(expected, [text], check="body", path="body", refs=References(exchange))


def check_json(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("json", exchange)
    if missing:
        yield missing
        return
    gateway = views.gateway_answer(exchange)
    if gateway.error is not None:
        yield Violation("json", "$", "a JSON body", short(exchange.response.raw), gateway.error)
        return
    yield from check_path_assertions(
        expected,
        gateway.document,
        check="json",
        refs=References(exchange),
        stream=reading.requested_stream(exchange),
    )


def check_error(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("error", exchange)
    if missing:
        yield missing
        return
    surface = surface_of(exchange)
    found = surface.error_document(exchange)
    if isinstance(found, Violation):
        yield found
        return
    document, where = found
    yield from surface.envelope_of(exchange.request.transport)(document, where, "error")
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return
    refs = References(exchange)
    for name in _ERROR_FIELDS:
        if name not in expected:
            continue
        try:
            wanted = refs.resolve(expected[name])
        except RefError as exc:
            yield Violation("error", f"{where}.error.{name}", expected[name], None, str(exc))
            continue
        actual = error.get(name)
        if name not in error or not json_equal(actual, wanted):
            yield Violation("error", f"{where}.error.{name}", wanted, short(actual), f"error.{name} differs")
    if "message_pattern" in expected:
        actual = error.get("message")
        try:
            # `${...}` references are interpolated as literal text (escaped), like `matches`.
            pattern = refs.resolve(expected["message_pattern"], escape=re.escape)
        except RefError as exc:
            yield Violation("error", f"{where}.error.message", expected["message_pattern"], None, str(exc))
            return
        try:
            matched = isinstance(actual, str) and re.search(str(pattern), actual) is not None
        except re.error as exc:
            yield Violation(
                "error",
                f"{where}.error.message",
                pattern,
                short(actual),
                f"bad message_pattern in the rule: {exc}",
            )
            return
        if not matched:
            yield Violation(
                "error",
                f"{where}.error.message",
                {"matches": pattern},
                short(actual),
                "error.message does not match",
            )


def check_schema(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("schema", exchange)
    if missing:
        yield missing
        return
    named = expected if isinstance(expected, str) else None
    response = exchange.response
    surface = surface_of(exchange)
    if reading.is_stream(response):
        view = views.stream_of(exchange)
        for payload in view.payloads:
            where = f"stream[{payload.event.index}]"
            if payload.done:
                continue
            if payload.parsed is None or not payload.parsed.ok:
                yield Violation(
                    "schema", where, "a JSON payload", short(payload.event.data), "data is not JSON"
                )
                continue
            name = named or surface.payload_schema_of(payload, exchange.request.transport)
            yield from validate(name, payload.json, check="schema", where=where)
        return
    parsed = reading.parse_json(response.raw)
    if not parsed.ok:
        yield Violation("schema", "$", named or "JSON", short(response.raw), f"body is {parsed.error}")
        return
    ok = served_status(response.status)
    name = named or (surface.answer_schema if ok else surface.error_schema)
    yield from validate(name, parsed.value, check="schema", where="$")


def check_usage(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("usage", exchange)
    if missing:
        yield missing
        return
    gateway = views.gateway_answer(exchange)
    usage = gateway.document.get("usage") if isinstance(gateway.document, dict) else None
    if not isinstance(usage, dict):
        why = gateway.error or (
            "the stream has no usage chunk" if gateway.stream else "the answer has no usage object"
        )
        yield Violation("usage", "usage", dict(expected), short(usage), why)
        return
    served = answer.last_served(exchange)
    upstream = answer.summarize(served) if served is not None else None

    for key, expression in expected.items():
        used: dict[str, int] = {}

        def resolve(name: str, used: dict[str, int] = used) -> int:
            value = _usage_name(name, usage, upstream)
            used[name] = value
            return value

        where = f"usage.{key}"
        try:
            wanted = expr.evaluate(expression, resolve)
        except ExprError as exc:
            yield Violation("usage", where, expression, None, f"cannot evaluate {expression!r}: {exc}")
            continue
        actual = _dig(usage, key)
        shown = ", ".join(f"{n}={v}" for n, v in used.items())
        explain = f"{expression} = {wanted}" + (f" ({shown})" if shown else "")
        if actual is _ABSENT:
            yield Violation("usage", where, wanted, None, f"{where} is missing; expected {explain}")
        elif not isinstance(actual, int) or isinstance(actual, bool):
            yield Violation(
                "usage", where, wanted, short(actual), f"{where} is a {json_type(actual)}, not an integer"
            )
        elif actual != wanted:
            yield Violation("usage", where, wanted, actual, f"{where} = {actual}, expected {explain}")


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def _dig(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return _ABSENT
        value = value[part]
    return value


def _usage_name(name: str, usage: Mapping[str, Any], upstream: answer.UpstreamAnswer | None) -> int:
    root, _, rest = name.partition(".")
    if root == "usage":
        value = _dig(dict(usage), rest)
        if value is _ABSENT:
            raise ExprError(f"the gateway's usage has no {rest}")
        if not isinstance(value, int) or isinstance(value, bool):
            raise ExprError(f"the gateway's usage.{rest} is a {json_type(value)}, not an integer")
        return value
    if upstream is None:
        raise ExprError("no upstream answer (message or completion) was served for this case")
    if rest in upstream.usage:
        return upstream.usage[rest]
    value = _dig(dict(upstream.raw_usage), rest)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ExprError(f"unknown upstream usage field {rest!r}")


def check_chunks(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("chunks", exchange)
    if missing:
        yield missing
        return
    if not reading.is_stream(exchange.response):
        yield Violation(
            "chunks", "chunks", "an SSE stream", short(exchange.response.raw), "the answer is not a stream"
        )
        return
    chunks = views.stream_of(exchange).chunks
    yield from check_path_assertions(
        expected,
        chunks,
        check="chunks",
        refs=References(exchange),
        stream=reading.requested_stream(exchange),
        prefix="chunks",
    )
