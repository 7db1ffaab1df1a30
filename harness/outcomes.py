"""The suite's shared words, owned here once: outcome names, verdicts and exit codes, variant labels,
the case-marker pattern, per-area counting, the gateway-key variable. Pure: imports nothing heavy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

OutcomeName = Literal[
    "PASS", "FAIL", "WARN", "SKIP", "NOT_APPLICABLE", "HARNESS_ERROR", "XFAIL", "XPASS", "FLAKY"
]
PASS: OutcomeName = "PASS"
FAIL: OutcomeName = "FAIL"
WARN: OutcomeName = "WARN"
SKIP: OutcomeName = "SKIP"
NOT_APPLICABLE: OutcomeName = "NOT_APPLICABLE"
HARNESS_ERROR: OutcomeName = "HARNESS_ERROR"
XFAIL: OutcomeName = "XFAIL"  # a failure the vendor's expectations file declares
XPASS: OutcomeName = "XPASS"  # a declared failure that passed: the expectations file is stale
FLAKY: OutcomeName = "FLAKY"  # live --repeat K: passed some runs, not all (fails the run under --strict)

# What the runner itself can produce for one rule variant.
RUN_OUTCOMES: tuple[OutcomeName, ...] = (PASS, FAIL, WARN, SKIP, NOT_APPLICABLE, HARNESS_ERROR, FLAKY)
# Every outcome a results document counts (after expectations are applied).
OUTCOMES: tuple[OutcomeName, ...] = (*RUN_OUTCOMES, XFAIL, XPASS)
# The columns of every per-area table (terminal, summary.md), in this order.
SHOWN: tuple[OutcomeName, ...] = (PASS, FAIL, WARN, FLAKY, NOT_APPLICABLE, HARNESS_ERROR, XFAIL)
# Outcomes a human should look at, worst first.
OUTCOME_ORDER: tuple[OutcomeName, ...] = (
    FAIL,
    XPASS,
    HARNESS_ERROR,
    FLAKY,
    WARN,
    XFAIL,
    PASS,
    NOT_APPLICABLE,
    SKIP,
)
PROBLEMS: frozenset[str] = frozenset({FAIL, WARN, HARNESS_ERROR, XPASS, FLAKY})
NOT_JUDGED: frozenset[str] = frozenset({NOT_APPLICABLE, SKIP})

# Exit codes of every command (README "What certify does"). 5, as pytest's "no tests collected": the run judged
# nothing (or too little of what it was asked), which is never a pass.
EXIT_OK, EXIT_FAILURES, EXIT_HARNESS, EXIT_CONFIG, EXIT_NOTHING_JUDGED = 0, 1, 2, 3, 5
# A run stopped by a signal exits 128 + its number, as a shell reports it: 130 for SIGINT, 143 for SIGTERM.
EXIT_INTERRUPTED = 130

Verdict = Literal["PASS", "FAIL", "INCOMPLETE", "UNJUDGED", "INTERRUPTED"]
VERDICT_EXIT: Mapping[str, int] = {
    "PASS": EXIT_OK,
    "FAIL": EXIT_FAILURES,
    "INCOMPLETE": EXIT_HARNESS,
    "UNJUDGED": EXIT_NOTHING_JUDGED,
    "INTERRUPTED": EXIT_INTERRUPTED,
}
# Why a rule variant asked for was not judged although the user asked for it (a model role mapped to nothing): such
# variants count against the run, unlike a feature not claimed (the user did not ask for it).
UNMAPPED_REASONS = ("model role(s) not mapped", "the clients' model role is mapped to nothing")

# The environment variable that carries the gateway's API key (never written to a report).
KEY_ENV = "GC_GATEWAY_KEY"

# `[gc:<rule-id>#<hex nonce>]`, put into the first user message so the replay upstream can route.
MARKER_PATTERN = r"\[gc:[A-Za-z0-9/._-]+#[0-9a-f]{6,32}\]"
MARKER_RE = re.compile(MARKER_PATTERN)
MARKER_RE_BYTES = re.compile(MARKER_PATTERN.encode())


def variant_label(variant: Mapping[str, Any]) -> str:
    """`stream=true,n=2`: how a rule variant is named in reports and node ids."""
    return ",".join(f"{k}={json.dumps(v)}" for k, v in variant.items())


def verdict(document: Mapping[str, Any]) -> Verdict:
    """One results document's verdict: INTERRUPTED (stopped by a signal: what it judged so far, never a pass),
    INCOMPLETE (the suite failed), FAIL, UNJUDGED, or PASS."""
    if document.get("interrupted"):
        return "INTERRUPTED"
    totals = document["totals"]
    if totals.get(HARNESS_ERROR, 0) or document.get("collection_errors", 0):
        return "INCOMPLETE"
    # A rotted expectations file fails the run (exit 1) even when every rule was as expected.
    if totals.get(FAIL, 0) or totals.get(XPASS, 0) or document.get("expectation_problems"):
        return "FAIL"
    if totals.get(FLAKY, 0) and document.get("target", {}).get("strict"):
        return "FAIL"  # a rule that passes only sometimes is a failure under --strict
    if judged_too_little(document):
        return "UNJUDGED"
    return "PASS"


def judged_too_little(document: Mapping[str, Any]) -> bool:
    """Nothing judged (every selected variant not applicable or skipped), or fewer variants judged than were left
    unjudged because a model role is mapped to nothing: what was judged falls below what was asked."""
    results = document.get("results") or []
    judged = sum(n for outcome, n in (document.get("totals") or {}).items() if outcome not in NOT_JUDGED)
    unmapped = sum(
        1
        for r in results
        if r.get("outcome") == NOT_APPLICABLE and str(r.get("reason") or "").startswith(UNMAPPED_REASONS)
    )
    return bool(judged == 0 or unmapped > judged)


def overall_verdict(documents: Iterable[Mapping[str, Any]]) -> Verdict:
    verdicts = {verdict(d) for d in documents}
    worst = ("INTERRUPTED", "INCOMPLETE", "FAIL", "UNJUDGED")
    return next((v for v in worst if v in verdicts), "PASS")  # type: ignore[return-value]


def exit_code(documents: Sequence[Mapping[str, Any]]) -> int:
    """The exit code of a run over these results documents (0/1/2, as the verdict says)."""
    return VERDICT_EXIT[overall_verdict(documents)]


def count_outcomes(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Totals by outcome, every outcome present (zeros included)."""
    totals: dict[str, int] = {name: 0 for name in OUTCOMES}
    for result in results:
        totals[result["outcome"]] = totals.get(result["outcome"], 0) + 1
    return totals


def area_rows(document: Mapping[str, Any]) -> list[tuple[str, dict[str, int]]]:
    """Outcome counts per area of one results document, areas sorted by name."""
    areas: dict[str, dict[str, int]] = {}
    for result in document["results"]:
        counts = areas.setdefault(result["area"], {})
        counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
    return sorted(areas.items())
