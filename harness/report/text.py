"""The terminal table certify prints: per profile and area, the count of each outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import area_rows
from harness.report.live import text_table


def summarize(documents: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table per profile and area: pass, fail, warn, flaky, n/a, harness errors (+ live coverage)."""
    header = f"{'profile':<10} {'area':<14} {'pass':>5} {'fail':>5} {'warn':>5} {'flaky':>5} {'n/a':>5} {'error':>6}"
    lines = [header, "-" * len(header)]
    for doc in documents:
        for area, c in [*area_rows(doc), ("(all)", doc["totals"])]:
            lines.append(
                f"{doc['profile']['name']:<10} {area:<14} {c.get('PASS', 0):>5} {c.get('FAIL', 0):>5} "
                f"{c.get('WARN', 0):>5} {c.get('FLAKY', 0):>5} {c.get('NOT_APPLICABLE', 0):>5} "
                f"{c.get('HARNESS_ERROR', 0):>6}"
            )
    return "\n".join(lines) + text_table(documents)
