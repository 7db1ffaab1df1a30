"""`clients`: its arguments; the run is harness/clients/command.py."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.clients.options import add_arguments


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "clients",
        help="drive the client libraries (SDKs, frameworks) through a gateway",
        description="Will my application work through it? Drive the client libraries (openai-python, "
        "langchain, openai-node, ai-sdk, ...) through a gateway, each scenario's provider answer scripted; "
        "a verdict per client (READY / LIMITED / BROKEN). Without --gateway-url: the embedded reference "
        "gateway, every profile.",
    )
    add_arguments(p)
    p.set_defaults(func=_run)
    m = sub.add_parser(
        "clients-matrix",
        help="the client x gateway x version matrix from stored clients runs",
        description="Read stored `clients` runs (report folders, pinned and --latest alike, or their results files) "
        "and write one Markdown grid: a row per client and version, a column per gateway, each cell the verdict "
        "and, for a failed scenario, what the library raised or returned.",
    )
    m.add_argument(
        "runs", nargs="+", type=Path, metavar="RUN", help="a clients report folder or results file"
    )
    m.add_argument(
        "--out", type=Path, metavar="FILE", help="write the matrix here (default: standard output)"
    )
    m.set_defaults(func=_matrix)


def _matrix(args: argparse.Namespace) -> int:
    from harness.clients.matrix import client_documents, matrix_markdown
    from harness.report.folder import writable_file

    if args.out:
        writable_file(args.out, "--out")  # before the runs are read (issue 48)
    text = matrix_markdown(client_documents(args.runs))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"client matrix: {args.out}")
    else:
        print(text, end="")
    return 0


def _run(args: argparse.Namespace) -> int:
    from harness.clients.command import run

    return run(args)
