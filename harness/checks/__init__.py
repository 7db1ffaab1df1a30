"""Pure checks: one function per check kind, named like the rule keyword that invokes it.

`check_<kind>(expected, exchange)` yields every `Violation` it finds (the way jsonschema keywords
yield errors); `run_checks` runs the kinds a rule's `expect` names. No I/O, no clock, no globals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from harness.exchange import Exchange


@dataclass(frozen=True)
class Violation:
    check: str  # the check kind (the `expect` key)
    path: str  # where: a JSON path, "status", a header name, "stream[3]", ...
    expected: Any
    actual: Any
    message: str


Check = Callable[[Any, Exchange], Iterator[Violation]]

CHECKS: dict[str, Check] = {}


def run_checks(expect: Mapping[str, Any], exchange: Exchange) -> list[Violation]:
    """Run every check kind named in `expect`; unknown kinds are a programming error (the schema forbids them)."""
    violations: list[Violation] = []
    for kind, expected in expect.items():
        violations.extend(CHECKS[kind](expected, exchange))
    return violations
