"""`certify`: its arguments (the plugin options it accepts, shared with the plugin) and the call into
harness/certify/command.py."""

from __future__ import annotations

import argparse
from typing import Any

from harness.orchestrate.options import add_certify_options


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    c = sub.add_parser(
        "certify",
        help="run the rules and write a report (default: the embedded reference gateway, every profile)",
        description="Run the rules and write a report folder (results.json, junit.xml, summary.md, "
        "certificate.html, badge.svg). Without --gateway-url: the embedded reference gateway, every profile.",
    )
    add_certify_options(c)
    from harness.conformance.publish import add_certify_options as add_report_options

    add_report_options(c)  # --implementation*, --kill-matrix: conformance-report.yaml
    c.add_argument(
        "--report-dir",
        help="where to write the report (default: ./gc-report/<UTC time>); a folder holding an earlier run's "
        "report gets this run's instead, never both",
    )
    c.add_argument(
        "--baseline",
        metavar="RUN",
        help="judge this run against an earlier one (its report folder, results file or conformance report): "
        "only a regression fails it (a failure it did not have, a new rule's included); what improved is said too",
    )
    c.add_argument("-n", "--workers", type=int, help="run rules in N parallel workers (pytest-xdist)")
    c.add_argument(
        "--fuzz-examples",
        type=int,
        default=300,  # ~1-2 s a profile on 2 cores (benchmarks/bench_fuzz.py: 150-350 examples/s)
        metavar="N",
        help="embedded run: also send N hostile requests to each profile's gateway (fixed seed; its "
        "`robustness` area; 0: none; default 300; not with --rule). `gateway-conformance fuzz` runs more.",
    )
    c.add_argument(
        "--clients",
        nargs="?",
        const="*",
        metavar="GLOB",
        help="also drive the client libraries (or those matching GLOB) through the same gateway, as "
        "`gateway-conformance clients` does: their results in clients/ and in the certificate and verdict",
    )
    c.set_defaults(func=certify)


def certify(args: argparse.Namespace) -> int:
    from harness.certify.baseline import certify as run_certify  # the run in a report folder of its own

    return run_certify(args)
