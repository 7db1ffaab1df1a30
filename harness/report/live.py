"""Live runs in reports: what each result judged per area (specific checks / structural only / status and shape
only / not runnable live), pass^k over `--repeat K`, the tokens the gateway reported, and the certificate's "live"
statement.

Pure: reads results documents (specs/schema/report.schema.json), writes text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

# What a live result judged (issue 20): specific checks from the rule's sentence; structural checks only (any
# honest answer meets them); status and the generic shape only; or nothing (not runnable live, or not sent).
COLUMNS = ("specific", "structural", "shape", "not_live")
LABELS = {
    "specific": "specific checks",
    "structural": "structural only",
    "shape": "status and shape only",
    "not_live": "not runnable live",
}
# The word a live PASS shows when it judged no specific check: its own visible class, never a plain PASS.
PASS_WORDS = {
    "specific": "PASS",
    "structural": "PASS (structural only)",
    "shape": "PASS (status and shape only)",
}
SPECIFIC = "specific"


def is_live(document: Mapping[str, Any]) -> bool:
    return bool(document.get("target", {}).get("upstream") == "live")


def coverage_kind(result: Mapping[str, Any]) -> str:
    """specific / structural / shape (status and shape only) / not_live (NOT_APPLICABLE, or SKIP: not sent)."""
    live = result.get("live_coverage")
    if not live or result["outcome"] in ("NOT_APPLICABLE", "SKIP"):
        return "not_live"
    if live.get("judgment") in COLUMNS:
        return str(live["judgment"])
    # Results written before `judgment` existed: specific keys, else anything beyond status and the schema.
    if live.get("specific"):
        return "specific"
    return "structural" if set(live.get("judged") or ()) - {"status", "schema"} else "shape"


def is_specific(result: Mapping[str, Any]) -> bool:
    """Run live and judged at least one check of the rule's own sentence."""
    return coverage_kind(result) == "specific"


def pass_word(result: Mapping[str, Any]) -> str:
    """How a result's outcome is shown: a live PASS says what it judged when that was not a specific check."""
    if result.get("outcome") == "PASS" and result.get("live_coverage"):
        return PASS_WORDS.get(coverage_kind(result), "PASS")
    return str(result.get("outcome"))


def not_observable(result: Mapping[str, Any]) -> list[str]:
    return list((result.get("live_coverage") or {}).get("not_observable") or [])


def coverage_rows(document: Mapping[str, Any]) -> list[tuple[str, dict[str, int]]]:
    """Per area (sorted) and `(all)`: how many rule variants fall in each judgment column."""
    areas: dict[str, dict[str, int]] = {}
    total = dict.fromkeys(COLUMNS, 0)
    for result in document["results"]:
        kind = coverage_kind(result)
        row = areas.setdefault(result["area"], dict.fromkeys(COLUMNS, 0))
        row[kind] += 1
        total[kind] += 1
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
        f"{s['pass_k']} of {s['ran']}); live, not a verdict of record — only replay results are"
    )


VERDICT_NOTE = "live, not a verdict of record"


def text_table(documents: Sequence[Mapping[str, Any]]) -> str:
    live = [d for d in documents if is_live(d)]
    if not live:
        return ""
    widths = {c: max(len(LABELS[c]), 6) for c in COLUMNS}
    header = f"{'profile':<10} {'area':<14} " + " ".join(f"{LABELS[c]:>{widths[c]}}" for c in COLUMNS)
    lines = ["", "live coverage (rule variants): what each live result judged", header, "-" * len(header)]
    for doc in live:
        for area, c in coverage_rows(doc):
            lines.append(
                f"{doc['profile']['name']:<10} {area:<14} "
                + " ".join(f"{c[k]:>{widths[k]}}" for k in COLUMNS)
            )
    for doc in live:
        s = live_summary(doc)
        hidden = sorted({k for r in doc["results"] for k in not_observable(r)})
        lines.append(
            f"{doc['profile']['name']}: {statement(doc)}; FLAKY {s['flaky']}; tokens reported by the gateway: "
            f"{s['tokens']['prompt_tokens']} prompt + {s['tokens']['completion_tokens']} completion"
        )
        if hidden:
            lines.append(f"{doc['profile']['name']}: not observable live: {', '.join(hidden)}")
    return "\n".join(lines)


def markdown_section(document: Mapping[str, Any]) -> list[str]:
    if not is_live(document):
        return []
    s = live_summary(document)
    hidden = sorted({k for r in document["results"] for k in not_observable(r)})
    out = [
        "",
        f"**Live:** {statement(document)}. FLAKY: {s['flaky']}. Tokens the gateway reported: "
        f"{s['tokens']['prompt_tokens']} prompt + {s['tokens']['completion_tokens']} completion."
        + (f" Not observable live: {', '.join(hidden)}." if hidden else ""),
        "",
        "What each live result judged (a PASS of the last three columns judged no check of its rule's own):",
        "",
        "| area | " + " | ".join(LABELS[c] for c in COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    for area, counts in coverage_rows(document):
        name = "**all**" if area == "(all)" else area
        out.append(f"| {name} | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |")
    return out
