"""What every check yields: one violation of one expectation, with where, expected and actual."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
