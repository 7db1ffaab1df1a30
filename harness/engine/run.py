"""One rule variant run and judged: the single run, live mode's repeat loop beside it (pass^k, FLAKY), and
`run_rule`, which checks applicability and picks between them. The pytest items, the CLI and the mutants all
go through `run_rule`; nothing here imports pytest."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import httpx

from harness import surfaces
from harness.checks import run_checks
from harness.engine.costguard import reported_tokens
from harness.engine.judge import body_streams, harness_fault, judge, new_diagnostics, step_violations
from harness.engine.live import LiveForm, live_form
from harness.engine.scripted import scripted_answers
from harness.engine.send import exchange_once
from harness.engine.target import Outcome, Target, not_applicable_reason
from harness.exchange import Exchange
from harness.families import endpoint_family
from harness.outcomes import FAIL, FLAKY, HARNESS_ERROR, NOT_APPLICABLE, PASS, WARN
from harness.replay.client import ReplayClient
from harness.spec.model import Rule


def run_rule(
    rule: Rule, variant: Mapping[str, Any], target: Target, client: httpx.Client, replay: ReplayClient | None
) -> Outcome:
    """Run one rule variant and judge it. Harness faults become HARNESS_ERROR, never a gateway FAIL."""
    reason = not_applicable_reason(rule, target)
    if reason is not None:
        return Outcome(rule.id, variant, NOT_APPLICABLE, reason=reason)
    if target.upstream_mode == "live":
        return run_live(rule, variant, target, client)
    return run_once(rule, variant, target, client, replay)


def called_families(exchange: Exchange) -> set[str]:
    """The provider families the gateway called for this exchange (and its steps), as the replay saw them."""
    exchanges = [exchange, *exchange.steps]
    found = {endpoint_family(c.path) for e in exchanges for c in e.upstream or ()}
    return {f for f in found if f is not None}


def run_once(
    rule: Rule, variant: Mapping[str, Any], target: Target, client: httpx.Client, replay: ReplayClient | None
) -> Outcome:
    """One exchange (and its stream_matches_nonstream companion) judged; no applicability check."""
    started = time.monotonic()
    use_replay = replay if target.upstream_mode == "replay" else None
    wall_started = time.time()  # replay diagnostics carry the (same host) wall time they were made at
    exchange: Exchange | None = None
    try:
        exchange = exchange_once(rule, variant, target, client, use_replay, rule.then)
        expect = rule.expect_for(variant, called_families(exchange))
        if expect.get("stream_matches_nonstream") and (variant.get("stream") is True or body_streams(rule)):
            companion = exchange_once(rule, {**variant, "stream": False}, target, client, use_replay)
            exchange = dataclasses.replace(exchange, companion=companion)
        violations = (*run_checks(expect, exchange), *step_violations(rule, variant, exchange))
    except Exception as exc:
        return Outcome(
            rule.id,
            variant,
            HARNESS_ERROR,
            reason=harness_fault(exc),
            exchange=exchange,
            duration=time.monotonic() - started,
        )
    diagnostics = new_diagnostics(use_replay, wall_started) if violations else ()
    return Outcome(
        rule.id,
        variant,
        judge(rule, violations, target.strict),
        violations=violations,
        exchange=exchange,
        duration=time.monotonic() - started,
        diagnostics=diagnostics,
    )


def run_live(rule: Rule, variant: Mapping[str, Any], target: Target, client: httpx.Client) -> Outcome:
    """Run a rule variant live `target.repeat` times; PASS only when every run passed, FLAKY when some did."""
    from harness.engine.costguard import large_request_reason

    started = time.monotonic()
    form = live_form(rule, variant, scripted_answers(rule), surfaces.surface(target.surface))
    large = large_request_reason(form, target.allow_large_requests)
    if large:
        form = LiveForm(reason=large)
    if form.reason is not None or form.rule is None:
        return Outcome(rule.id, variant, NOT_APPLICABLE, reason=form.reason or "")
    runs: list[Outcome] = []
    tokens = {"prompt_tokens": 0, "completion_tokens": 0}
    for _ in range(max(target.repeat, 1)):
        if form.send_twice:  # prime the provider's prompt cache; the second answer is judged
            primer = run_once(form.rule, variant, target, client, None)
            for k, v in reported_tokens(primer.exchange).items():
                tokens[k] += v
        run = run_once(form.rule, variant, target, client, None)
        for k, v in reported_tokens(run.exchange).items():
            tokens[k] += v
        runs.append(run)
    passed = sum(1 for r in runs if r.outcome == PASS)
    worst = next((r for r in runs if r.outcome != PASS), runs[-1])
    if passed == len(runs):
        outcome = PASS
    elif passed and worst.outcome in (FAIL, WARN):
        outcome = FLAKY
    else:
        outcome = worst.outcome
    live = {
        **form.coverage(),
        "repeat": len(runs),
        "passed": passed,
        "outcomes": [r.outcome for r in runs],
        "tokens": tokens,
    }
    return dataclasses.replace(worst, outcome=outcome, duration=time.monotonic() - started, live=live)


__all__ = ["run_live", "run_once", "run_rule"]
