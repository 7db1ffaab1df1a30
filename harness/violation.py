"""What every check yields: one violation of one expectation, with where, expected and actual; and the order and
bounds in which people read them (the cause first, repeats folded)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.exchange import Exchange
from harness.values import short


@dataclass(frozen=True)
class Violation:
    check: str  # the check kind (the `expect` key)
    path: str  # where: a JSON path, "status", a header name, "stream[3]", ...
    expected: Any
    actual: Any
    message: str


Check = Callable[[Any, Exchange], Iterator[Violation]]


def no_response(check: str, exchange: Exchange) -> Violation | None:
    """A violation when no HTTP response arrived at all (reset, timeout, refused)."""
    response = exchange.response
    if response.status is not None:
        return None
    return Violation(
        check,
        "response",
        "an HTTP response",
        {"transport_error": response.transport_error, "received": short(response.raw)},
        f"no response: {response.transport_error or 'nothing received'}",
    )


# --- the cause first, and a bounded account (issue 48) ------------------------------------------------------

SHOWN = 10  # a failure's violations a person is shown (terminal, certificate); results keep them all
KEPT = 1000  # distinct violations a result keeps; beyond, one more entry counts the rest
_REPLAY_SAYS = "gateway-conformance replay: "
_UNMARKED = ("unmarked", "unknown-marker")
_INDEX = re.compile(r"\[\d+\]")
CAPPED = "the answer is longer than the harness reads (its byte cap)"


def _replay_words(value: Any) -> str | None:
    """The replay upstream's own words in a served error envelope (any family's): the string after its prefix."""
    if isinstance(value, str):
        return value.split(_REPLAY_SAYS, 1)[1] if _REPLAY_SAYS in value else None
    children = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    return next((said for child in children if (said := _replay_words(child))), None)


def replay_diagnostic(exchange: Exchange | None, diagnostics: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """What the replay upstream said in place of a provider's answer, when it did: no answer scripted for the family
    the gateway called, a cassette the request does not match, an endpoint it does not play; or requests without
    this rule's case marker while it ran. Its refusal as the provider would refuse is the gateway's fault, not this
    (`provider_refusal`), nor is a scripted fault."""
    if exchange is None or exchange.upstream is None:
        return None
    exchanges = (exchange, *exchange.steps)
    for ex in exchanges:
        for call in ex.upstream or ():
            served = call.served
            if served is None or served.provider_refusal or served.cassette is not None or served.fault:
                continue
            try:
                said = _replay_words(json.loads(served.body))
            except (UnicodeDecodeError, ValueError):
                said = None
            if said:
                return said
    unmarked = [d for d in diagnostics if d.get("kind") in _UNMARKED]
    if unmarked and not any(ex.upstream for ex in exchanges):
        return (
            f"{len(unmarked)} request(s) reached it while this rule ran without its case marker "
            f"({unmarked[0].get('message')}): the gateway dropped or rewrote the user's text, or called the provider "
            "for something else"
        )
    return None


def _about_transport(v: Violation, response: Any) -> bool:
    error = response.transport_error
    if error and (v.actual == error or error in v.message or v.message.startswith("no response")):
        return True
    return bool(response.truncated) and "byte cap" in v.message


def cause_first(
    violations: Sequence[Violation], exchange: Exchange | None, diagnostics: Sequence[Mapping[str, Any]] = ()
) -> list[Violation]:
    """The violations with the cause as the headline: the replay upstream's own diagnostic (the rule could not be
    played as written), then a connection cut or an answer longer than the harness reads, then what the checks
    found in what did arrive (`data is not JSON` is what a cut stream looks like, never its cause)."""
    if not violations:
        return []
    head: list[Violation] = []
    said = replay_diagnostic(exchange, diagnostics)
    if said:
        message = f"the replay upstream had no provider answer to give: {said}"
        head.append(
            Violation("replay", "upstream", "a provider answer from the rule's cassettes", said, message)
        )
    rest = list(violations)
    response = exchange.response if exchange is not None else None
    if response is not None and (response.transport_error or response.truncated):
        # Said the same way whatever the checks said of it (one cause, one note), their own words right after.
        head.append(
            Violation(
                "transport",
                "response",
                "a complete answer",
                response.transport_error or f"{len(response.raw)} bytes read",
                f"the answer was cut: {response.transport_error}; what follows judges the part that arrived"
                if response.transport_error
                else f"{CAPPED}: the rest was not read, so what follows judges a cut answer",
            )
        )
        head += [v for v in rest if _about_transport(v, response)]
        rest = [v for v in rest if not _about_transport(v, response)]
    return head + rest


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)[:500]


def collapsed(violations: Sequence[Violation], kept: int = KEPT) -> list[Violation]:
    """The violations with repeats folded: those the same but for array indices (`stream[3].object` for each of
    100,000 chunks) are the first of them, its message saying how many more and where the last was; past `kept`
    distinct ones, one more entry counts the rest. What a results file keeps, and what a person reads from."""
    groups: dict[tuple[str, str, str, str], list[Violation]] = {}
    for v in violations:
        key = (v.check, _INDEX.sub("[]", v.path), _INDEX.sub("[]", v.message), _text(v.expected))
        groups.setdefault(key, []).append(v)
    out = []
    for same in groups.values():
        first = same[0]
        if len(same) > 1:
            more = f" (and {len(same) - 1:,} more like it, the last at {same[-1].path})"
            first = Violation(first.check, first.path, first.expected, first.actual, first.message + more)
        out.append(first)
    if len(out) > kept:
        rest = len(out) - kept
        out = [
            *out[:kept],
            Violation("more", "$", None, None, f"… and {rest:,} more distinct violations, not kept"),
        ]
    return out
