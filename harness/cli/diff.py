"""`diff A B`: two runs compared rule variant by rule variant; the work is harness/conformance/diff.py."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.outcomes import EXIT_FAILURES, EXIT_OK


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "diff",
        help="what changed between two runs (regressions first); exit 1 on a regression",
        description="Compare two runs rule variant by rule variant: regressions (failed in B, not in A; a rule new "
        "in B included), new WARNs, harness errors, variants no longer judged, changed reasons, improvements, "
        "variants added or removed, and a changed catalog digest. A and B are each a results file, a report folder "
        "(certify's, or a stored run's) or a conformance report with its results beside it. Exit 0: no "
        "regression; 1: at least one; 3: A or B is not a run.",
    )
    p.add_argument("a", metavar="A", help="the earlier run (the baseline)")
    p.add_argument("b", metavar="B", help="the later run")
    p.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="text (default), markdown (a pull-request comment) or json (every change)",
    )
    p.add_argument("--out", type=Path, metavar="FILE", help="write it here instead of standard output")
    p.set_defaults(func=_diff)


def _diff(args: argparse.Namespace) -> int:
    from harness.conformance.diff import compare, render
    from harness.conformance.runs import load_run
    from harness.report.folder import writable_file

    if args.out:
        writable_file(args.out, "--out")  # before the runs are read (issue 48)
    comparison = compare(load_run(args.a), load_run(args.b))
    text = render(comparison, args.format)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        from harness.conformance.diff import summary_line

        print(f"diff: {summary_line(comparison)}; written to {args.out}")
    else:
        print(text, end="")
    return EXIT_FAILURES if comparison.regressions else EXIT_OK
