"""summary.md: a results summary fit for a pull-request comment."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import SHOWN, area_rows, verdict
from harness.report.live import VERDICT_NOTE, is_live, markdown_section


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(documents: Sequence[Mapping[str, Any]]) -> str:
    """A summary fit for a pull-request comment."""
    out = ["# gateway-conformance report", ""]
    for doc in documents:
        totals = doc["totals"]
        out += [
            f"## {doc['profile']['name']} — {verdict(doc)}" + (f" ({VERDICT_NOTE})" if is_live(doc) else ""),
            "",
            f"Target: `{doc['target'].get('description') or doc['target']['gateway_url']}` · "
            f"suite {doc['suite']['version']} · upstream {doc['target']['upstream']} · "
            f"{doc['timings']['duration']:.1f}s",
            "",
            "| area | " + " | ".join(s.lower().replace("_", " ") for s in SHOWN) + " |",
            "|---|" + "---:|" * len(SHOWN),
        ]
        for area, counts in [*area_rows(doc), ("**all**", totals)]:
            out.append(f"| {area} | " + " | ".join(str(counts.get(s, 0)) for s in SHOWN) + " |")
        out += markdown_section(doc)
        problems = [r for r in doc["results"] if r["outcome"] in ("FAIL", "WARN", "HARNESS_ERROR", "FLAKY")]
        if problems:
            out += [
                "",
                "| outcome | rule | level | what the doc says | first violation |",
                "|---|---|---|---|---|",
            ]
            for r in problems:
                first = r["violations"][0]["message"] if r["violations"] else (r.get("reason") or "")
                variant = ",".join(f"{k}={json.dumps(v)}" for k, v in r["variant"].items())
                out.append(
                    f"| {r['outcome']} | `{r['rule_id']}`{' [' + variant + ']' if variant else ''} | "
                    f"{r['level']} | {_cell(r['source']['quote'])} | {_cell(first[:200])} |"
                )
        from harness.report.patterns import failure_patterns

        out += ["", *[f"> **Note:** {_cell(p.line())}" for p in failure_patterns(doc)]]
        known = [r for r in doc["results"] if r["outcome"] == "XFAIL"]
        if known:
            out += ["", "Known failures (XFAIL, declared in the expectations file):", "",
                    "| rule | reason | ticket | expires |", "|---|---|---|---|"]  # fmt: skip
            for r in known:
                e = r.get("expectation") or {}
                variant = ",".join(f"{k}={json.dumps(v)}" for k, v in r["variant"].items())
                out.append(
                    f"| `{r['rule_id']}`{' [' + variant + ']' if variant else ''} | {_cell(e.get('reason', ''))} | "
                    f"{_cell(e.get('ticket') or '')} | {e.get('expires') or ''} |"
                )
        out.append("")
    return "\n".join(out)
