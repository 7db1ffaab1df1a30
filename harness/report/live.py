"""Live runs in reports: coverage per area (rules fully judged / judged on the client side only / not runnable
live), pass^k over `--repeat K`, the tokens the gateway reported, and the certificate's "live" statement.

Pure: reads results documents (specs/schema/report.schema.json), writes text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

COLUMNS = ("full", "client_only", "not_live")
LABELS = {"full": "fully judged", "client_only": "client side only", "not_live": "not runnable live"}
# Beside the columns: rule variants run live that judged something of the rule's own beyond the status code
# (not only the `schema: true` every 2xx rule gets) — the measure of live coverage.
SPECIFIC = "specific"


def is_live(document: Mapping[str, Any]) -> bool:
    return bool(document.get("target", {}).get("upstream") == "live")


def coverage_kind(result: Mapping[str, Any]) -> str:
    """full: every expectation judged as written; client_only: some not observable live or in a structural form;
    not_live: not run live (NOT_APPLICABLE, or skipped)."""
    live = result.get("live_coverage")
    if not live or result["outcome"] in ("NOT_APPLICABLE", "SKIP"):
        return "not_live"
    return "client_only" if live.get("not_observable") or live.get("structural") else "full"


def is_specific(result: Mapping[str, Any]) -> bool:
    """Run live and judged at least one expectation of the rule's own beyond the status code."""
    live = result.get("live_coverage")
    return coverage_kind(result) != "not_live" and bool(live and live.get("specific"))


def coverage_rows(document: Mapping[str, Any]) -> list[tuple[str, dict[str, int]]]:
    """Per area (sorted) and `(all)`: how many rule variants fall in each coverage column, and how many of
    them are `specific` (is_specific)."""
    areas: dict[str, dict[str, int]] = {}
    total = dict.fromkeys((*COLUMNS, SPECIFIC), 0)
    for result in document["results"]:
        kind = coverage_kind(result)
        row = areas.setdefault(result["area"], dict.fromkeys((*COLUMNS, SPECIFIC), 0))
        row[kind] += 1
        total[kind] += 1
        if is_specific(result):
            row[SPECIFIC] += 1
            total[SPECIFIC] += 1
    return [*sorted(areas.items()), ("(all)", total)]


def share(counts: Mapping[str, int]) -> str:
    n = sum(counts[c] for c in COLUMNS)
    return f"{counts[SPECIFIC]} ({100 * counts[SPECIFIC] / n:.1f}%)" if n else "0"


def live_summary(document: Mapping[str, Any]) -> dict[str, Any]:
    """repeat K, pass^k (rule variants that passed every run, of those run live), tokens the gateway reported."""
    ran = [
        r for r in document["results"] if r.get("live_coverage") and r["outcome"] not in ("NOT_APPLICABLE",)
    ]
    all_passed = sum(1 for r in ran if r["live_coverage"].get("passed") == r["live_coverage"].get("repeat"))
    tokens = {"prompt_tokens": 0, "completion_tokens": 0}
    for r in ran:
        for key in tokens:
            tokens[key] += int(r["live_coverage"].get("tokens", {}).get(key, 0))
    started = document.get("timings", {}).get("started")
    date = datetime.fromtimestamp(started, timezone.utc).date().isoformat() if started else ""
    return {
        "repeat": int(document["target"].get("repeat", 1)),
        "ran": len(ran),
        "pass_k": all_passed,
        "flaky": sum(1 for r in ran if r["outcome"] == "FLAKY"),
        "tokens": tokens,
        "date": date,
        "host": urlsplit(document["target"]["gateway_url"]).netloc,
    }


def statement(document: Mapping[str, Any]) -> str:
    """What a live certificate says of itself."""
    s = live_summary(document)
    return (
        f"live run on {s['date']} against {s['host']}, each rule {s['repeat']} times (pass^{s['repeat']}: "
        f"{s['pass_k']} of {s['ran']}); not a verdict of record — only replay results are"
    )


def text_table(documents: Sequence[Mapping[str, Any]]) -> str:
    live = [d for d in documents if is_live(d)]
    if not live:
        return ""
    header = (
        f"{'profile':<10} {'area':<14} {'fully judged':>12} {'client only':>12} {'not live':>9} "
        f"{'beyond status (specific)':>25}"
    )
    lines = ["", "live coverage (rule variants)", header, "-" * len(header)]
    for doc in live:
        for area, c in coverage_rows(doc):
            lines.append(
                f"{doc['profile']['name']:<10} {area:<14} {c['full']:>12} {c['client_only']:>12} {c['not_live']:>9} "
                f"{share(c):>25}"
            )
    for doc in live:
        s = live_summary(doc)
        lines.append(
            f"{doc['profile']['name']}: {statement(doc)}; FLAKY {s['flaky']}; tokens reported by the gateway: "
            f"{s['tokens']['prompt_tokens']} prompt + {s['tokens']['completion_tokens']} completion"
        )
    return "\n".join(lines)


def markdown_section(document: Mapping[str, Any]) -> list[str]:
    if not is_live(document):
        return []
    s = live_summary(document)
    out = [
        "",
        f"**Live:** {statement(document)}. FLAKY: {s['flaky']}. Tokens the gateway reported: "
        f"{s['tokens']['prompt_tokens']} prompt + {s['tokens']['completion_tokens']} completion.",
        "",
        "| area | " + " | ".join(LABELS[c] for c in COLUMNS) + " | beyond status (specific) |",
        "|---|" + "---:|" * (len(COLUMNS) + 1),
    ]
    for area, counts in coverage_rows(document):
        name = "**all**" if area == "(all)" else area
        out.append(f"| {name} | " + " | ".join(str(counts[c]) for c in COLUMNS) + f" | {share(counts)} |")
    return out
