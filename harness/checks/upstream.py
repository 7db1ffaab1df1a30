"""Checks on the upstream side: how many calls the gateway made and what it sent (body, headers, schema)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from harness.checks import Violation, views
from harness.checks.matchers import check_path_assertions, match_values, short
from harness.checks.refs import References
from harness.checks.schemas import validate
from harness.exchange import Exchange, UpstreamCall


def _unobserved(check: str, exchange: Exchange) -> Violation | None:
    if exchange.upstream is None:
        return Violation(
            check,
            "upstream",
            "the replay upstream's record",
            None,
            "the upstream side was not observed (live mode?)",
        )
    return None


def _body(call: UpstreamCall) -> views.Parsed:
    if call.json is not None:
        return views.Parsed(True, call.json)
    return views.parse_json(call.body)


def check_upstream_calls(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    unobserved = _unobserved("upstream_calls", exchange)
    if unobserved:
        yield unobserved
        return
    count = len(exchange.upstream or ())
    if isinstance(expected, Mapping):
        low, high = expected.get("min"), expected.get("max")
        if (low is not None and count < low) or (high is not None and count > high):
            yield Violation(
                "upstream_calls",
                "upstream",
                dict(expected),
                count,
                f"the gateway made {count} upstream calls",
            )
    elif count != expected:
        yield Violation(
            "upstream_calls",
            "upstream",
            expected,
            count,
            f"the gateway made {count} upstream calls, expected {expected}",
        )


def _select(call: Any, calls: tuple[UpstreamCall, ...]) -> list[int] | str:
    """Indexes of the calls an assertion reads (`call`: index, -1 = last by default, or `each`); or why none."""
    if not calls:
        return "the gateway made no upstream call"
    if call == "each":
        return list(range(len(calls)))
    number = -1 if call is None else call
    if not isinstance(number, int) or isinstance(number, bool) or not -len(calls) <= number < len(calls):
        return f"no upstream call {number!r} (the gateway made {len(calls)})"
    return [number % len(calls)]


def check_upstream(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    unobserved = _unobserved("upstream", exchange)
    if unobserved:
        yield unobserved
        return
    calls = exchange.upstream or ()
    refs = References(exchange)
    stream = views.requested_stream(exchange)
    for assertion in expected if isinstance(expected, list) else [expected]:
        selected = _select(assertion.get("call") if isinstance(assertion, Mapping) else None, calls)
        if isinstance(selected, str):
            path = assertion.get("path", "$") if isinstance(assertion, Mapping) else "$"
            yield Violation("upstream", f"upstream{path[1:]}", short(assertion), None, selected)
            continue
        for i in selected:
            parsed = _body(calls[i])
            if not parsed.ok:
                yield Violation(
                    "upstream",
                    f"upstream[{i}]",
                    "a JSON body",
                    short(calls[i].body),
                    f"upstream body is {parsed.error}",
                )
                continue
            yield from check_path_assertions(
                [assertion], parsed.value, check="upstream", refs=refs, stream=stream, prefix=f"upstream[{i}]"
            )


def check_upstream_headers(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    unobserved = _unobserved("upstream_headers", exchange)
    if unobserved:
        yield unobserved
        return
    calls = exchange.upstream or ()
    if not calls:
        yield Violation(
            "upstream_headers", "upstream", dict(expected), None, "the gateway made no upstream call"
        )
        return
    headers = calls[-1].headers
    refs = References(exchange)
    for name, matcher in expected.items():
        values = [value for key, value in headers.items() if key.lower() == name.lower()]
        yield from match_values(matcher, values, check="upstream_headers", path=name.lower(), refs=refs)


def check_upstream_schema(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    unobserved = _unobserved("upstream_schema", exchange)
    if unobserved:
        yield unobserved
        return
    calls = exchange.upstream or ()
    if not calls:
        yield Violation("upstream_schema", "upstream", expected, None, "the gateway made no upstream call")
    for i, call in enumerate(calls):
        parsed = _body(call)
        if not parsed.ok:
            yield Violation(
                "upstream_schema",
                f"upstream[{i}]",
                "a JSON body",
                short(call.body),
                f"upstream body is {parsed.error}",
            )
            continue
        yield from validate(str(expected), parsed.value, check="upstream_schema", where=f"upstream[{i}]")
