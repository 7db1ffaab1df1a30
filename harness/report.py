"""Reports people read, from results documents (specs/schema/report.schema.json): Markdown summary,
HTML certificate (harness/report_html.py), SVG badge; and `gateway-conformance report` to render them again.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SHOWN = ("PASS", "FAIL", "WARN", "NOT_APPLICABLE", "HARNESS_ERROR")


def verdict(document: Mapping[str, Any]) -> str:
    totals = document["totals"]
    if totals.get("HARNESS_ERROR", 0) or document.get("collection_errors", 0):
        return "INCOMPLETE"
    # A rotted expectations file fails the run (exit 1) even when every rule was as expected.
    if totals.get("FAIL", 0) or totals.get("XPASS", 0) or document.get("expectation_problems"):
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
        out.append("")
    return "\n".join(out)


BADGE_COLORS = {"PASS": "#2da44e", "FAIL": "#cf222e", "INCOMPLETE": "#d4a72c"}


def _text_width(text: str) -> int:
    # Approximate Verdana 11px advance widths: enough for a badge, no font metrics needed.
    narrow, wide = set("ijlt.,:;|!/ 1()[]'"), set("mwMW@%")
    return round(sum(3.6 if c in narrow else 10.0 if c in wide else 7.0 for c in text))


def badge_svg(documents: Sequence[Mapping[str, Any]]) -> str:
    """`conformance | ezat 312/312`: passed out of the rules judged (not N/A), colored by the overall verdict."""
    verdicts = {verdict(d) for d in documents}
    overall = next((v for v in ("INCOMPLETE", "FAIL") if v in verdicts), "PASS")
    parts = []
    for doc in documents:
        totals = doc["totals"]
        judged = sum(n for outcome, n in totals.items() if outcome not in ("NOT_APPLICABLE", "SKIP"))
        parts.append(f"{doc['profile']['name']} {totals.get('PASS', 0)}/{judged}")
    label, message = "conformance", " · ".join(parts) or "no results"
    if overall == "INCOMPLETE":
        message += " (incomplete)"
    lw, mw = _text_width(label) + 12, _text_width(message) + 12
    width, color = lw + mw, BADGE_COLORS[overall]
    esc = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
    label_x, message_x = lw / 2, lw + mw / 2
    label, message = ("".join(esc.get(c, c) for c in t) for t in (label, message))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{label}: {message}"><title>{label}: {message}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{color}"/><rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{label_x}" y="15" fill="#010101" fill-opacity=".3">{label}</text>'
        f'<text x="{label_x}" y="14">{label}</text>'
        f'<text x="{message_x}" y="15" fill="#010101" fill-opacity=".3">{message}</text>'
        f'<text x="{message_x}" y="14">{message}</text></g></svg>\n'
    )


def write_reports(report_dir: Path, documents: Sequence[Mapping[str, Any]]) -> None:
    # Imported here: report_html imports `verdict` from this module.
    from harness.report_html import certificate_html

    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "summary.md").write_text(markdown_summary(documents), encoding="utf-8")
    (report_dir / "certificate.html").write_text(certificate_html(documents), encoding="utf-8")
    (report_dir / "badge.svg").write_text(badge_svg(documents), encoding="utf-8")


class BadResults(Exception):
    """A results file that cannot be rendered: exit 3 with this message."""


def load_results(path: Path) -> dict[str, Any]:
    """One results document, validated against specs/schema/report.schema.json."""
    import jsonschema

    from harness.paths import schema_path

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadResults(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadResults(f"{path}: not a JSON file: {exc}") from exc
    schema = json.loads(schema_path("report").read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(document))
    if error is not None:
        where = error.json_path
        raise BadResults(f"{path}: not a gateway-conformance results file ({where}: {error.message})")
    result: dict[str, Any] = document
    return result


def main(argv: Sequence[str]) -> int:
    """`gateway-conformance report RESULTS.json [...] --out DIR`: summary.md, certificate.html, badge.svg."""
    parser = argparse.ArgumentParser(
        prog="gateway-conformance report",
        description="Render the Markdown summary, HTML certificate and SVG badge from results files "
        "(one per profile, as certify or `pytest --report-json` wrote them).",
    )
    parser.add_argument("results", nargs="+", type=Path, help="results.json file(s)")
    parser.add_argument("--out", required=True, type=Path, help="directory to write the reports into")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return 3 if exc.code not in (0, None) else 0
    try:
        documents = [load_results(path) for path in args.results]
    except BadResults as exc:
        print(f"gateway-conformance report: {exc}", file=sys.stderr)
        return 3
    try:
        write_reports(args.out, documents)
    except OSError as exc:
        print(f"gateway-conformance report: cannot write to {args.out}: {exc}", file=sys.stderr)
        return 3
    for name in ("summary.md", "certificate.html", "badge.svg"):
        print(args.out / name)
    return 0
