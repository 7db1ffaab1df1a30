"""Reports people read, from results documents (specs/schema/report.schema.json): Markdown summary."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SHOWN = ("PASS", "FAIL", "WARN", "NOT_APPLICABLE", "HARNESS_ERROR")


def verdict(document: Mapping[str, Any]) -> str:
    totals = document["totals"]
    if totals.get("HARNESS_ERROR", 0) or document.get("collection_errors", 0):
        return "INCOMPLETE"
    if totals.get("FAIL", 0) or totals.get("XPASS", 0):
        return "FAIL"
    return "PASS"


def _area_rows(document: Mapping[str, Any]) -> list[tuple[str, dict[str, int]]]:
    areas: dict[str, dict[str, int]] = {}
    for result in document["results"]:
        counts = areas.setdefault(result["area"], {})
        counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
    return sorted(areas.items())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(documents: Sequence[Mapping[str, Any]]) -> str:
    """A summary fit for a pull-request comment."""
    out = ["# gateway-conformance report", ""]
    for doc in documents:
        totals = doc["totals"]
        out += [
            f"## {doc['profile']['name']} — {verdict(doc)}",
            "",
            f"Target: `{doc['target'].get('description') or doc['target']['gateway_url']}` · "
            f"suite {doc['suite']['version']} · upstream {doc['target']['upstream']} · "
            f"{doc['timings']['duration']:.1f}s",
            "",
            "| area | " + " | ".join(s.lower().replace("_", " ") for s in SHOWN) + " |",
            "|---|" + "---:|" * len(SHOWN),
        ]
        for area, counts in [*_area_rows(doc), ("**all**", totals)]:
            out.append(f"| {area} | " + " | ".join(str(counts.get(s, 0)) for s in SHOWN) + " |")
        problems = [r for r in doc["results"] if r["outcome"] in ("FAIL", "WARN", "HARNESS_ERROR")]
        if problems:
            out += ["", "| outcome | rule | level | what the doc says | first violation |", "|---|---|---|---|---|"]
            for r in problems:
                first = r["violations"][0]["message"] if r["violations"] else (r.get("reason") or "")
                variant = ",".join(f"{k}={json.dumps(v)}" for k, v in r["variant"].items())
                out.append(f"| {r['outcome']} | `{r['rule_id']}`{' [' + variant + ']' if variant else ''} | "
                           f"{r['level']} | {_cell(r['source']['quote'])} | {_cell(first[:200])} |")
        out.append("")
    return "\n".join(out)


def write_reports(report_dir: Path, documents: Sequence[Mapping[str, Any]]) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "summary.md").write_text(markdown_summary(documents), encoding="utf-8")
