"""`drift`: its arguments; the comparison is harness/drift.py."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "drift",
        help="compare a new version of a gateway's doc with its rules and ledger",
        description="Compare a (new) version of a gateway's doc with its rules and coverage ledger.",
    )
    p.add_argument("--profile", required=True, help="whose rules and ledger (specs/<profile>/)")
    p.add_argument(
        "--doc",
        type=Path,
        default=None,
        help="the doc's Markdown file, e.g. a new version (default: the copy shipped beside the profile, "
        "specs/<profile>/<doc>.md)",
    )
    p.add_argument(
        "--specs-dir",
        "--specs",  # the old spelling; every other command says --specs-dir
        dest="specs",
        type=Path,
        default=None,
        help="the specs folder (default: this package's)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from harness.drift import run

    return run(args)
