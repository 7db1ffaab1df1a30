"""What every check yields: one violation of one expectation, with where, expected and actual."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
