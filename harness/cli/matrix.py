"""`matrix`: every catalog against every gateway (harness/orchestrate/matrix.py runs it)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from harness.outcomes import EXIT_HARNESS, EXIT_OK, KEY_ENV


def _gateway(text: str) -> tuple[str, str]:
    name, sep, url = text.partition("=")
    if not sep or not name or not url.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"expected NAME=URL (the gateway's OpenAI base URL), got {text!r}")
    return name, url


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "matrix",
        help="rule-by-gateway compatibility matrix across profiles",
        description="Run every profile's catalog against several gateways (default: the embedded reference "
        "gateway started in each profile) and write a rule x gateway table (matrix.html, matrix.md).",
    )
    p.add_argument(
        "--profiles",
        help="comma-separated profiles: the catalogs to run, and where to start the "
        "reference gateway (default: all)",
    )
    p.add_argument(
        "--gateway",
        action="append",
        type=_gateway,
        default=[],
        metavar="NAME=URL",
        help="a gateway to compare (repeatable); its upstream must be the replay upstream",
    )
    p.add_argument(
        "--reference", action="store_true", help="with --gateway: also the reference gateway columns"
    )
    p.add_argument("--gateway-key", help=f"the --gateway gateways' API key (default: ${KEY_ENV})")
    p.add_argument("--replay-port", type=int, help="serve the replay upstream on 127.0.0.1:P")
    p.add_argument("--replay-url", help="use a replay upstream already running")
    p.add_argument("--rule", action="append", default=[], help="only rules whose id matches this glob")
    p.add_argument("-n", "--workers", type=int, help="parallel workers per catalog run (pytest-xdist)")
    p.add_argument("--out", help="where to write (default: ./gc-matrix/<UTC time>)")
    p.set_defaults(func=matrix)


def matrix(args: argparse.Namespace) -> int:
    from harness.orchestrate.matrix import run_matrix
    from harness.report.folder import fresh_report_dir
    from harness.report.matrix import column_status, matrix_rows, write_matrix

    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()] if args.profiles else None
    # A folder of this run's own, writable, checked before any gateway starts (issue 48).
    with fresh_report_dir(args.out, "gc-matrix", option="--out") as out_dir:
        columns = run_matrix(
            out_dir,
            profiles,
            dict(args.gateway),
            args.reference or None,
            args.rule,
            args.gateway_key or os.environ.get(KEY_ENV),
            args.replay_port,
            args.replay_url,
            args.workers,
        )
        write_matrix(out_dir, columns)
    rows = matrix_rows(columns)
    print(f"\n{len(rows)} rule variants x {len(columns)} gateways; {sum(r.differs for r in rows)} differ")
    for column in columns:
        print(f"  {column.name}: {column_status(column)}")
    print(f"matrix: {out_dir / 'matrix.html'}\n        {out_dir / 'matrix.md'}")
    # Differences are the answer, not a failure; only a matrix with nothing in it is.
    return EXIT_OK if any(c.documents for c in columns) else EXIT_HARNESS
