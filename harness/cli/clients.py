"""`clients`: its arguments; the run is harness/clients/command.py."""

from __future__ import annotations

import argparse
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


def _run(args: argparse.Namespace) -> int:
    from harness.clients.command import run

    return run(args)
