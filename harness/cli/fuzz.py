"""`fuzz`: its arguments; the work is harness/fuzz/command.py."""

from __future__ import annotations

import argparse
from typing import Any

from harness.outcomes import KEY_ENV


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "fuzz",
        help="hostile requests against a gateway: no 5xx for a client error, envelopes, health",
        description="Hostile requests, generated from a seed and shrunk by hypothesis, against a gateway: no 5xx "
        "for a client's mistake, every error in the profile's shape, no hang, healthy afterwards, nothing "
        "invalid upstream. Exit codes: 0 nothing found, 1 an invariant broken, 2 the harness failed, 3 bad "
        "configuration.",
    )
    p.add_argument(
        "--gateway-url", help="your gateway's OpenAI base URL (default: the embedded reference gateway)"
    )
    p.add_argument("--gateway-key", help=f"its API key (default: ${KEY_ENV})")
    p.add_argument(
        "--profile",
        action="append",
        help="profile(s) to fuzz (repeatable; with --gateway-url: one; default: all)",
    )
    p.add_argument("--model", action="append", default=[], help="a model id to use (default: the profile's)")
    p.add_argument(
        "--replay-port", type=int, help="serve the observed replay upstream on 127.0.0.1:P for your gateway"
    )
    p.add_argument("--examples", type=int, default=1000, help="examples per profile (default 1000)")
    p.add_argument("--seconds", type=float, help="stop a profile after about this many seconds")
    p.add_argument(
        "--seed", type=int, default=0, help="the generator's seed (fixed: the same bodies every run)"
    )
    p.add_argument(
        "--rule-timeout", type=float, default=30.0, help="seconds one request may take (default 30)"
    )
    p.add_argument(
        "--report-dir", help="where to write <profile>/robustness.json (default: ./gc-report/fuzz-<UTC>)"
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from harness.fuzz.command import run

    return run(args)
