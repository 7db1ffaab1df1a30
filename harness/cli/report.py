"""`report` (a report folder from results files, or the implementations table) and `verify-report` (a
conformance report checked against the installed suite)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.outcomes import EXIT_OK


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
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
    p.add_argument(
        "--readme",
        type=Path,
        metavar="FILE",
        help="with --implementations: also put the table into FILE between its implementations-table markers",
    )
    p.set_defaults(func=report)
    v = sub.add_parser(
        "verify-report",
        help="re-check a conformance-report.yaml against the installed suite (schema, version, catalog hash)",
        description="Re-check a conformance-report.yaml against the installed suite: its schema, the suite "
        "version, each profile's catalog and cassette digest, and that its statistics add up to its results; "
        "with --results, that it is what the run's results files give. It does not prove a run produced it. "
        "Exit 0 when it holds, 1 (one line per reason) when not, 3 when a file cannot be read.",
    )
    v.add_argument("--results", type=Path, action="append", metavar="RESULTS.json",
                   help="a results.json of the run the report was built from (repeatable): the report's outcomes "
                        "digest, core and feature results must be what it gives")  # fmt: skip
    v.add_argument("report", type=Path, metavar="FILE", help="a conformance-report.yaml")
    v.add_argument("--specs-dir", metavar="DIR", help="the specs dir the report's profiles came from")
    v.set_defaults(func=verify_report)


def verify_report(args: argparse.Namespace) -> int:
    from harness.conformance.publish import verify_command

    return verify_command(args)


def report(args: argparse.Namespace) -> int:
    from harness.report import load_results, write_reports

    if args.implementations is not None or not args.results:
        from harness.conformance.publish import write_implementations

        if args.results or args.implementations is None:
            raise ConfigError("give results.json file(s) or --implementations DIR, not both or neither")
        for path in write_implementations(args.implementations, args.out):
            print(path)
        if args.readme is not None:
            from harness.conformance.publish import splice_table

            splice_table(args.readme, args.implementations)
            print(args.readme)
        return EXIT_OK
    documents = [load_results(path) for path in args.results]
    try:
        write_reports(args.out, documents)
    except OSError as exc:
        raise ConfigError(f"cannot write to {args.out}: {exc}") from exc
    for name in ("summary.md", "certificate.html", "badge.svg"):
        print(args.out / name)
    return EXIT_OK
