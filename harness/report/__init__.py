"""Reports people read, from results documents (specs/schema/report.schema.json).

document.py  the results document a run writes (`--report-json`, certify's results.json)
text.py      the terminal table per profile and area
markdown.py  summary.md, for a pull-request comment
html.py      certificate.html: self-contained, every failure with its doc quote and four panes
badge.py     badge.svg
matrix.py    the rule x gateway compatibility matrix (matrix.md, matrix.html)

The conformance report vendors publish is harness/conformance/.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import BadResults
from harness.report.badge import badge_svg
from harness.report.html import certificate_html
from harness.report.markdown import markdown_summary


def write_reports(report_dir: Path, documents: Sequence[Mapping[str, Any]]) -> None:
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "summary.md").write_text(markdown_summary(documents), encoding="utf-8")
    (report_dir / "certificate.html").write_text(certificate_html(documents), encoding="utf-8")
    (report_dir / "badge.svg").write_text(badge_svg(documents), encoding="utf-8")


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


__all__ = ["badge_svg", "certificate_html", "load_results", "markdown_summary", "write_reports"]
