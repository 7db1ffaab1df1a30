"""The terminal table certify prints: per profile and area, the count of each outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import area_rows, variant_label
from harness.report.live import text_table


def summarize(documents: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table per profile and area: pass, fail, warn, flaky, n/a, harness errors, xfail (+ live
    coverage, notes on failures that share a cause, known failures)."""
    width = max([10, *(len(profile_label(doc)) for doc in documents)])
    header = (
        f"{'profile':<{width}} {'area':<14} {'pass':>5} {'fail':>5} {'warn':>5} {'flaky':>5} {'n/a':>5} "
        f"{'error':>6} {'xfail':>6}"
    )
    lines = [header, "-" * len(header)]
    for doc in documents:
        for area, c in [*area_rows(doc), ("(all)", doc["totals"])]:
            lines.append(
                f"{profile_label(doc):<{width}} {area:<14} {c.get('PASS', 0):>5} {c.get('FAIL', 0):>5} "
                f"{c.get('WARN', 0):>5} {c.get('FLAKY', 0):>5} {c.get('NOT_APPLICABLE', 0):>5} "
                f"{c.get('HARNESS_ERROR', 0):>6} {c.get('XFAIL', 0):>6}"
            )
    from harness.report.patterns import pattern_lines

    lines += [f"note: {line}" for line in pattern_lines(documents)]
    known = known_failures(documents)
    if known:
        lines += ["", "known failures (XFAIL, from the expectations file):", *known]
    return "\n".join(lines) + text_table(documents)


def profile_label(document: Mapping[str, Any]) -> str:
    """The profile's name, and the gateway profile it ran on when a catalog runs on several (`openai@lyrouter`:
    the embedded reference gateway serves profile openai in each of its own profiles)."""
    name = str(document["profile"]["name"])
    description = str((document.get("target") or {}).get("description") or "")
    _, found, gateway = description.rpartition(", profile ")
    return f"{name}@{gateway}" if found and gateway else name


def known_failures(documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per XFAIL: the rule, and the expectation entry's reason, ticket and expiry."""
    out = []
    for doc in documents:
        for r in doc["results"]:
            if r["outcome"] != "XFAIL":
                continue
            e = r.get("expectation") or {}
            variant = variant_label(r.get("variant") or {})
            extra = ", ".join(
                x for x in (e.get("ticket"), e.get("expires") and f"expires {e['expires']}") if x
            )
            out.append(
                f"  {r['rule_id']}{' [' + variant + ']' if variant else ''}: {e.get('reason', '')}"
                + (f" ({extra})" if extra else "")
            )
    return out
