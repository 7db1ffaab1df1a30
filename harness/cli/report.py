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
    p.add_argument("results", nargs="*", type=Path, help="results.json file(s)")
    p.add_argument("--out", required=True, type=Path, help="directory to write the reports into")
    p.add_argument(
        "--implementations",
        type=Path,
        metavar="DIR",
        help="instead: the table of every conformance report (*.yaml) under DIR (implementations.md, .html)",
    )
    p.set_defaults(func=report)


def report(args: argparse.Namespace) -> int:
    from harness.report import load_results, write_reports

    if args.implementations is not None or not args.results:
        from harness.conformance.publish import write_implementations

        if args.results or args.implementations is None:
            raise ConfigError("give results.json file(s) or --implementations DIR, not both or neither")
        for path in write_implementations(args.implementations, args.out):
            print(path)
        return EXIT_OK
    documents = [load_results(path) for path in args.results]
    try:
        write_reports(args.out, documents)
    except OSError as exc:
        raise ConfigError(f"cannot write to {args.out}: {exc}") from exc
    for name in ("summary.md", "certificate.html", "badge.svg"):
        print(args.out / name)
    return EXIT_OK
