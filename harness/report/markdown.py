"""summary.md: a results summary fit for a pull-request comment: each run headed by its profile and the gateway it
ran on, cells in plain text (no raw HTML from a rule's quote or a gateway's message), and the whole under
`LIMIT` characters (GitHub refuses a comment over 65,536): the rows that do not fit are counted, and the certificate
has them all."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import SHOWN, area_rows, verdict
from harness.report.live import VERDICT_NOTE, is_live, markdown_section
from harness.report.text import profile_label

# Characters of summary.md made from the results; what certify appends (the clients' grid, the comparison with a
# baseline) has the rest of a pull-request comment's 65,536.
LIMIT = 50_000
_QUOTE, _FIRST = 160, 200  # a cell's quote and first violation, at most


def _cell(text: str, limit: int | None = None) -> str:
    """Text for a table cell: one line, `|` escaped, HTML shown as text (`&lt;think&gt;`, never a rendered tag)."""
    flat = " ".join(text.split())
    if limit is not None and len(flat) > limit:
        flat = flat[:limit] + "…"
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def _variant(result: Mapping[str, Any]) -> str:
    variant = ",".join(f"{k}={json.dumps(v)}" for k, v in (result.get("variant") or {}).items())
    return f" [{variant}]" if variant else ""


def markdown_summary(documents: Sequence[Mapping[str, Any]], limit: int = LIMIT) -> str:
    """A summary fit for a pull-request comment."""
    out = ["# gateway-conformance report", ""]
    heads = [_head(doc) for doc in documents]
    budget = (
        limit
        - sum(len(line) + 1 for head in heads for line in head)
        - len("# gateway-conformance report\n\n")
    )
    for doc, head in zip(documents, heads, strict=True):
        out += head
        rows, budget = _rows(doc, budget)
        out += rows
        out.append("")
    return "\n".join(out)


def _head(doc: Mapping[str, Any]) -> list[str]:
    """A run's heading (its profile and the gateway it ran on: one catalog runs on several), its line and table."""
    totals = doc["totals"]
    where = doc["target"].get("description") or doc["target"]["gateway_url"]
    out = [
        f"## {profile_label(doc)} — {verdict(doc)}" + (f" ({VERDICT_NOTE})" if is_live(doc) else ""),
        "",
        f"Target: `{where}` · suite {doc['suite']['version']} · upstream {doc['target']['upstream']} · "
        f"{doc['timings']['duration']:.1f}s"
        + (
            f" · **interrupted by {doc['interrupted']}: what was judged so far**"
            if doc.get("interrupted")
            else ""
        ),
        "",
        "| area | " + " | ".join(s.lower().replace("_", " ") for s in SHOWN) + " |",
        "|---|" + "---:|" * len(SHOWN),
    ]
    for area, counts in [*area_rows(doc), ("**all**", totals)]:
        out.append(f"| {area} | " + " | ".join(str(counts.get(s, 0)) for s in SHOWN) + " |")
    out += markdown_section(doc)
    from harness.report.patterns import failure_patterns

    out += ["", *[f"> **Note:** {_cell(p.line())}" for p in failure_patterns(doc)]]
    return out


def _rows(doc: Mapping[str, Any], budget: int) -> tuple[list[str], int]:
    """The failures and known failures of a run, as many as `budget` characters take; the rest counted."""
    out: list[str] = []
    problems = [r for r in doc["results"] if r["outcome"] in ("FAIL", "WARN", "HARNESS_ERROR", "FLAKY")]
    known = [r for r in doc["results"] if r["outcome"] == "XFAIL"]
    rows = []
    for r in problems:
        first = r["violations"][0]["message"] if r["violations"] else (r.get("reason") or "")
        rows.append(
            f"| {r['outcome']} | `{r['rule_id']}`{_variant(r)} | {r['level']} | "
            f"{_cell(r['source']['quote'], _QUOTE)} | {_cell(first, _FIRST)} |"
        )
    table = ["", "| outcome | rule | level | what the doc says | first violation |", "|---|---|---|---|---|"]
    kept, budget = _fit(rows, table, budget, "failure(s)")
    out += kept
    rows = []
    for r in known:
        e = r.get("expectation") or {}
        rows.append(
            f"| `{r['rule_id']}`{_variant(r)} | {_cell(e.get('reason', ''), _QUOTE)} | {_cell(e.get('ticket') or '')} "
            f"| {e.get('expires') or ''} |"
        )
    table = ["", "Known failures (XFAIL, declared in the expectations file):", "",
             "| rule | reason | ticket | expires |", "|---|---|---|---|"]  # fmt: skip
    kept, budget = _fit(rows, table, budget, "known failure(s)")
    out += kept
    return out, budget


def _fit(rows: list[str], head: list[str], budget: int, what: str) -> tuple[list[str], int]:
    if not rows:
        return [], budget
    spent = sum(len(line) + 1 for line in head)
    kept = []
    for row in rows:
        if spent + len(row) + 1 > budget - 200:  # room for the line that counts the rest
            break
        kept.append(row)
        spent += len(row) + 1
    out = [*head, *kept] if kept else []
    if len(kept) < len(rows):
        more = f"… and {len(rows) - len(kept)} more {what}: certificate.html and results.json have them all."
        out += ["", more]
        spent += len(more) + 2
    return out, budget - spent
