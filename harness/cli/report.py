"""`report`: a report folder from results files."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import ConfigError
from harness.outcomes import EXIT_OK


def report_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="render reports (HTML certificate, Markdown, badge) from results files",
        description="Render the Markdown summary, HTML certificate and SVG badge from results files "
        "(one per profile, as certify or `pytest --report-json` wrote them).",
    )
    p.add_argument("results", nargs="+", type=Path, help="results.json file(s)")
    p.add_argument("--out", required=True, type=Path, help="directory to write the reports into")
    p.set_defaults(func=report)


def report(args: argparse.Namespace) -> int:
    from harness.report import load_results, write_reports

    documents = [load_results(path) for path in args.results]
    try:
        write_reports(args.out, documents)
    except OSError as exc:
        raise ConfigError(f"cannot write to {args.out}: {exc}") from exc
    for name in ("summary.md", "certificate.html", "badge.svg"):
        print(args.out / name)
    return EXIT_OK
