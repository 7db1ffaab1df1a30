"""Judging: an exchange's violations to an outcome, each `then` step on its own expectations, a harness fault
told apart from a gateway's, and the replay upstream's diagnostics for a failing rule."""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from harness.checks import Violation, run_checks
from harness.engine import steps as steps_mod
from harness.errors import HarnessError, ReplayError
from harness.exchange import Exchange
from harness.outcomes import FAIL, PASS, WARN, OutcomeName
from harness.replay.client import ReplayClient
from harness.spec.model import STREAM_ONLY, UPSTREAM_SIDE_EXPECTATIONS, Rule


def judge(rule: Rule, violations: Sequence[Violation], strict: bool) -> OutcomeName:
    if not violations:
        return PASS
    if rule.level == "MUST" or strict:
        return FAIL
    return WARN


def step_violations(rule: Rule, variant: Mapping[str, Any], first: Exchange) -> list[Violation]:
    """Each `then` step judged on its own `expect` (stream-only keys dropped for non-stream variants)."""
    out: list[Violation] = []
    stream_only = not variant.get("stream", False) and not body_streams(rule)
    for i, (step, exchange) in enumerate(zip(rule.then, first.steps, strict=True)):
        expect = steps_mod.resolve_first(dict(step.get("expect") or {}), first)
        if stream_only:
            expect = {k: v for k, v in expect.items() if k not in STREAM_ONLY}
        if exchange.upstream is None:  # live: the upstream side of a step is not observable either
            expect = {k: v for k, v in expect.items() if k not in UPSTREAM_SIDE_EXPECTATIONS}
        out += [steps_mod.label(i, v) for v in run_checks(expect, exchange)]
    return out


def harness_fault(exc: Exception) -> str:
    """Why a rule is HARNESS_ERROR: a HarnessError's message (the suite's own fault: replay upstream,
    rule data), or for anything else a bug of the suite, with its traceback — never silent."""
    if isinstance(exc, HarnessError):
        where = "replay upstream: " if isinstance(exc, ReplayError) else ""
        return f"{where}{type(exc).__name__}: {exc}"
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return f"internal error (a bug in gateway-conformance) {type(exc).__name__}: {exc}\n{detail}"


def body_streams(rule: Rule) -> bool:
    """The rule's request asks for a stream whatever its variant (`stream: true`, or the WebSocket transport)."""
    body = rule.request.get("body")
    return rule.request.get("transport", "http") != "http" or (
        isinstance(body, Mapping) and body.get("stream") is True
    )


def new_diagnostics(replay: ReplayClient | None, since: float) -> tuple[Mapping[str, Any], ...]:
    """Replay diagnostics made while this rule ran (fetched only for a failing rule)."""
    if replay is None:
        return ()
    try:
        return tuple(d for d in replay.diagnostics() if float(d.get("at", since)) >= since)
    except ReplayError:
        return ()
