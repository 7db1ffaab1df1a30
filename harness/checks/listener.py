"""Checks on what the harness itself observed around the exchange: its loopback listener, and the answer's timing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from harness.exchange import Exchange
from harness.values import short
from harness.violation import Violation


def check_listener(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`{connections: N}`: the harness's listener (`${listener_url}`) accepted exactly N connections."""
    record = exchange.listener
    if record is None:
        yield Violation(
            "listener",
            "listener",
            dict(expected),
            None,
            "the request opened no listener (the rule must name ${listener_url})",
        )
        return
    wanted = expected.get("connections", 0) if isinstance(expected, Mapping) else expected
    seen = len(record.connections)
    if seen != wanted:
        first = next((head for head in record.connections if head), b"")
        yield Violation(
            "listener",
            "listener",
            {"connections": wanted},
            {"connections": seen, "first_bytes": short(first, 120)},
            f"the gateway connected to {record.url} {seen} time(s)",
        )


def check_elapsed(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """`{max: S}`: the whole answer arrived within S seconds of sending (a refusal that came fast)."""
    limit = float(expected["max"] if isinstance(expected, Mapping) else expected)
    took = exchange.response.elapsed
    if exchange.response.status is None or took > limit:
        yield Violation(
            "elapsed",
            "elapsed",
            {"max": limit},
            round(took, 3),
            f"the answer took {took:.2f}s, more than {limit:g}s"
            + ("" if exchange.response.status is not None else " (and never completed)"),
        )
