"""`mutants`: its arguments; the kill matrix is harness/mutants/command.py."""

from __future__ import annotations

import argparse
from typing import Any


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "mutants",
        help="run mutant gateways against the catalogs (the kill matrix)",
        description="Run mutant gateways against a profile's catalog and print the kill matrix. Exit codes: 0 "
        "every mutant killed (or explained), 1 a mutant survived, 2 the harness failed, 3 bad configuration.",
    )
    p.add_argument("--profile", default="ezat", help="whose catalog and mutants (default ezat)")
    p.add_argument(
        "--reference-gateway",
        default=None,
        metavar="PROFILE",
        help="for a catalog the reference gateway serves in several profiles (openai, anthropic, responses): the "
        "one to mutate (default the first); its mutants are the ones listed for <catalog>@<profile>",
    )
    p.add_argument(
        "--mutant", action="append", default=[], metavar="GLOB", help="only mutants whose id matches"
    )
    p.add_argument(
        "--sample", type=int, metavar="N", help="N mutants at random (fixed --seed) plus --always ones"
    )
    p.add_argument("--seed", type=int, default=6, help="the random seed of --sample (default 6)")
    p.add_argument(
        "--always", action="append", default=[], metavar="ID", help="always run this mutant with --sample"
    )
    p.add_argument(
        "--jobs", "-j", type=int, default=4, help="rule variants run in parallel threads (default 4)"
    )
    p.add_argument(
        "--first-kill",
        action="store_true",
        help="stop a mutant at its first killing rule (its `killed_by` hints first): proves every mutant "
        "dies, fast; the full matrix needs every rule",
    )
    p.add_argument("--out", help="where to write kill-matrix.json and .md (default ./gc-mutants/<UTC time>)")
    p.add_argument(
        "--gateway-url", help="another gateway's OpenAI base URL (default: start the reference gateway)"
    )
    p.add_argument("--gateway-key", help="its API key (default $GC_GATEWAY_KEY)")
    p.add_argument(
        "--replay-url", help="with --gateway-url: the replay upstream your gateway normally talks to"
    )
    p.add_argument(
        "--upstream-proxy-port",
        type=int,
        help="with --gateway-url: serve the upstream-side proxy on "
        "127.0.0.1:P (point your gateway's Anthropic base URL there); without it, upstream mutants are "
        "not run",
    )
    p.add_argument("--feature", action="append", default=[], help="declare an optional feature (repeatable)")
    p.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the run without a mutant (it finds rule variants that fail anyway; CI may trust certify)",
    )
    p.add_argument(
        "--rule-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a rule may take before the gateway's answer counts as hung (default 30)",
    )
    p.add_argument(
        "--keepalive-silence",
        type=float,
        help="with --gateway-url: the keep-alive silence your gateway declares (default 25; the embedded "
        "reference gateway states its own)",
    )
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="GLOB",
        help="only rules whose id matches (a partial matrix: no rules-killing-none verdict)",
    )
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="run only slice I of N (mutants in catalog order, every N-th from the I-th); merge the "
        "slices' kill-matrix.json with --merge",
    )
    p.add_argument(
        "--merge",
        nargs="+",
        metavar="DIR",
        help="build one kill matrix from the shards' outputs (directories holding kill-matrix.json, or the "
        "files) and exit; writes to --out",
    )
    p.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="run each mutant against the whole catalog, one mutant after the other (the slow way, "
        "without reusing baseline outcomes; for comparison)",
    )
    p.add_argument(
        "--nonstream-timeout",
        type=float,
        default=None,
        metavar="S",
        help="with --gateway-url: your gateway's non-streaming limit (504 after S seconds); the reference "
        "gateway states its own",
    )
    p.add_argument(
        "--implementation",
        metavar="FILE",
        help="with --gateway-url: your gateway's implementation file, whose `features:` set up the features you "
        "claim (the reference gateway declares its own)",
    )
    p.add_argument("--list", action="store_true", help="list the selected mutants and exit")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from harness.mutants.command import run

    return run(args)
