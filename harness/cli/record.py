"""`record`: its arguments; the work is harness/record/command.py."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.record.providers import PROVIDERS


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "record",
        help="regenerate cassettes against a live provider",
        description="Regenerate cassettes against a live provider: each scenario is provoked with its own request "
        "and written only when the recording shows it; the semantic diff is printed.",
    )
    p.add_argument("--provider", required=True, help=f"the provider to record from ({'|'.join(PROVIDERS)})")
    p.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="GLOB",
        help="only cassettes whose name matches (repeatable; default: all)",
    )
    p.add_argument("--base-url", help="the provider's API base URL (default: its public API)")
    p.add_argument(
        "--cassettes-dir",
        type=Path,
        help="the cassettes folder to refresh (default: ./cassettes, seeded from the suite's set when missing)",
    )
    p.add_argument(
        "--attempts",
        type=int,
        default=1,
        metavar="N",
        help="record a scenario up to N times until a recording shows it (default 1)",
    )
    p.add_argument("--dry-run", action="store_true", help="record and show the diff, but write nothing")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from harness.record.command import run

    return run(args)
