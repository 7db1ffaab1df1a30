"""The `clients` command's options, declared once: the command line (harness/cli/clients.py) and certify's
`--clients` (harness/certify/clients.py) both parse with them."""

from __future__ import annotations

import argparse

from harness.outcomes import KEY_ENV


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gateway-url", metavar="URL", help="the gateway's OpenAI base URL (needs one --profile)")
    p.add_argument("--gateway-key", metavar="KEY", help=f"the gateway's API key (default: ${KEY_ENV})")
    p.add_argument("--profile", action="append", default=[], metavar="NAME", help="profile(s) (repeatable)")
    p.add_argument("--model-map", metavar="FILE", help="YAML: model roles to your ids (with --gateway-url)")
    p.add_argument("--replay-url", metavar="URL", help="a replay upstream already running")
    p.add_argument("--replay-port", metavar="P", type=int, help="serve the replay upstream on 127.0.0.1:P")
    p.add_argument("--report-dir", help="where to write (default: ./gc-clients/<UTC time>)")
    p.add_argument(
        "--expectations", metavar="FILE", help="known failures (XFAIL), as for certify (one profile)"
    )
    p.add_argument("--client", action="append", default=[], metavar="GLOB", help="only these clients")
    p.add_argument("--scenario", action="append", default=[], metavar="GLOB", help="only these scenarios")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="a header every client sends on every request (a gateway's routing headers; repeatable)",
    )
    p.add_argument("--list", action="store_true", help="list the clients and scenarios, run nothing")
    p.add_argument(
        "--latest",
        action="store_true",
        help="also run each client on the newest release of its libraries (resolved from PyPI and npm into "
        "~/.cache/gateway-conformance/latest), beside the pinned run: the versions named, and which scenario "
        "changed with which upgrade",
    )
    p.add_argument(
        "--mutants",
        action="append",
        default=[],
        metavar="GLOB",
        help="instead: the embedded reference gateway with each of these mutants (real gateway bugs, "
        "harness/mutants/catalog.yaml) in turn; count those that make a client scenario fail (one --profile)",
    )
