"""Checks on the upstream side: how many calls the gateway made and what it sent (body, headers, schema)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from harness.checks.matchers import check_path_assertions, find, match_values
from harness.checks.refs import References
from harness.checks.schemas import validate
from harness.errors import PathError
from harness.exchange import Exchange, UpstreamCall
from harness.families import endpoint_family
from harness.surfaces import reading
from harness.values import json_equal, short
from harness.violation import Violation


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


def _body(call: UpstreamCall) -> reading.Parsed:
    if call.json is not None:
        return reading.Parsed(True, call.json)
    return reading.parse_json(call.body)


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
    """Indexes of the calls an assertion reads (`call`: index, -1 = last by default, `each`, or `each-if-any`:
    every call, none being nothing to judge); or why none."""
    if call == "each-if-any":
        return list(range(len(calls)))
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
    stream = reading.requested_stream(exchange)
    for assertion in expected if isinstance(expected, list) else [expected]:
        selected = _select(assertion.get("call") if isinstance(assertion, Mapping) else None, calls)
        if isinstance(selected, str):
            path = assertion.get("path", "$") if isinstance(assertion, Mapping) else "$"
            yield Violation("upstream", f"upstream{path[1:]}", short(assertion), None, selected)
            continue
        family = assertion.get("family") if isinstance(assertion, Mapping) else None
        if family is not None:
            # Keyed by family: judged on the calls to that family's endpoint only (a cassette set's rule).
            selected = [i for i in selected if endpoint_family(calls[i].path) == family]
            assertion = {k: v for k, v in assertion.items() if k != "family"}
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
    wanted = dict(expected)
    which = wanted.pop(
        "call", None
    )  # `each` / `each-if-any`: every call (none being nothing to judge), else the last
    if not calls:
        if which != "each-if-any":
            yield Violation("upstream_headers", "upstream", wanted, None, "the gateway made no upstream call")
        return
    refs = References(exchange)
    for call in calls if which in ("each", "each-if-any") else calls[-1:]:
        for name, matcher in wanted.items():
            if name == "*":
                values = [f"{key}: {value}" for key, value in call.headers.items()]
            else:
                values = [value for key, value in call.headers.items() if key.lower() == name.lower()]
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


def _raw_text(call: UpstreamCall) -> str:
    return call.body.decode("utf-8", errors="replace")


def check_upstream_raw(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """A matcher on the upstream body exactly as the gateway sent it (bytes as UTF-8 text: key order, spacing)."""
    unobserved = _unobserved("upstream_raw", exchange)
    if unobserved:
        yield unobserved
        return
    calls = exchange.upstream or ()
    selected = _select(expected.get("call"), calls)
    if isinstance(selected, str):
        yield Violation("upstream_raw", "upstream", short(dict(expected)), None, selected)
        return
    matcher = {k: v for k, v in expected.items() if k != "call"}
    refs = References(exchange)
    for i in selected:
        yield from match_values(
            matcher, [_raw_text(calls[i])], check="upstream_raw", path=f"upstream[{i}].raw", refs=refs
        )


def _ordered(value: Any) -> str:
    """The value's JSON text with keys in the order they arrived (json.loads keeps it)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def check_upstream_compare(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`[{path, same_as, order?, call?, same_as_call?}]`: two values of one upstream body are equal (with `order`:
    key for key, in the same order, as the gateway serialised them), or, with `same_as_call`, a value of one call's
    body and one of another's (what the gateway sent for one request beside what it sent for another). Each path
    must select the same number of values, at least one; they are compared pairwise."""
    unobserved = _unobserved("upstream_compare", exchange)
    if unobserved:
        yield unobserved
        return
    calls = exchange.upstream or ()
    for assertion in expected:
        where = f"upstream{assertion['path'][1:]}"
        selected = _select(assertion.get("call"), calls)
        if isinstance(selected, str):
            yield Violation("upstream_compare", where, short(dict(assertion)), None, selected)
            continue
        other = assertion.get("same_as_call")
        if other is not None and not -len(calls) <= other < len(calls):
            yield Violation(
                "upstream_compare", where, short(dict(assertion)), len(calls),
                f"no upstream call {other} to compare with ({len(calls)} call(s))",
            )  # fmt: skip
            continue
        for i in selected:
            j = i if other is None else other
            try:
                document, compared = json.loads(calls[i].body), json.loads(calls[j].body)
            except ValueError as exc:
                bad = i if not _is_json(calls[i].body) else j
                yield Violation(
                    "upstream_compare", f"upstream[{bad}]", "a JSON body", short(calls[bad].body), str(exc)
                )
                continue
            try:
                left, right = find(document, assertion["path"]), find(compared, assertion["same_as"])
            except PathError as exc:
                yield Violation("upstream_compare", where, None, None, str(exc))
                continue
            if not left or len(left) != len(right):
                yield Violation(
                    "upstream_compare",
                    where,
                    f"as many values as {assertion['same_as']}",
                    {"path": len(left), "same_as": len(right)},
                    "the two paths do not select the same number of values (at least one)",
                )
                continue
            against = assertion["same_as"] + ("" if other is None else f" of upstream call {j}")
            for a, b in zip(left, right, strict=True):
                if not json_equal(a, b):
                    keys = _differing_keys(a, b)
                    detail = f" (differing keys: {', '.join(keys)})" if keys else ""
                    yield Violation(
                        "upstream_compare", where, short(b), short(a), f"differs from {against}{detail}"
                    )
                elif assertion.get("order") and _ordered(a) != _ordered(b):
                    yield Violation(
                        "upstream_compare",
                        where,
                        short(_ordered(b)),
                        short(_ordered(a)),
                        f"equal content, but its keys are not in the same order as {assertion['same_as']}",
                    )


def _differing_keys(a: Any, b: Any) -> list[str]:
    """The keys of two objects whose values differ (or that only one has), for a human reading a whole-body diff."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return []
    return sorted(k for k in {*a, *b} if k not in a or k not in b or not json_equal(a[k], b[k]))


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def check_provider_accepts(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Every request the gateway sent is one the provider accepts (the replay upstream validates like it).

    Implicit for every rule (`provider_accepts: true`); a rule whose doc says the gateway forwards a request
    the provider refuses says `provider_accepts: false` and then requires that refusal; `either` judges only
    what the client got (a gateway may forward what the client sent and pass the provider's refusal on, as
    the provider itself would have answered the client).
    """
    if exchange.upstream is None or expected == "either":
        return  # live mode: the real provider answers for itself
    refused = [
        (i, c.served.provider_refusal)
        for i, c in enumerate(exchange.upstream)
        if c.served and c.served.provider_refusal
    ]
    if expected is False:
        if exchange.upstream and not refused:
            yield Violation(
                "provider_accepts",
                "upstream",
                "a request the provider refuses",
                "accepted",
                "the rule expects the gateway to forward a request the provider refuses; every call was accepted",
            )
        return
    for i, why in refused:
        yield Violation(
            "provider_accepts",
            f"upstream[{i}]",
            "a request the provider accepts",
            why,
            f"the gateway sent a request the provider refuses: {why}",
        )


def check_upstream_path(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Matchers on the request target of upstream calls: the path, then `?query` when there is one."""
    unobserved = _unobserved("upstream_path", exchange)
    if unobserved:
        yield unobserved
        return
    calls = exchange.upstream or ()
    refs = References(exchange)
    for item in expected:
        if "stream" in item and bool(exchange.variant.get("stream")) is not item["stream"]:
            continue
        matcher = {k: v for k, v in item.items() if k not in ("call", "stream", "family")}
        selected = _select(item.get("call"), calls)
        if isinstance(selected, str):
            yield Violation("upstream_path", "upstream", short(matcher), None, selected)
            continue
        if item.get("family") is not None:  # judged on the calls to that family's endpoint only
            selected = [i for i in selected if endpoint_family(calls[i].path) == item["family"]]
        for i in selected:
            target = f"{calls[i].path}?{calls[i].query}" if calls[i].query else calls[i].path
            yield from match_values(
                matcher, [target], check="upstream_path", path=f"upstream[{i}]", refs=refs
            )
