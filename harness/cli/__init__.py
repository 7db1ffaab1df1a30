"""`gateway-conformance`: argument parsing only, one module per command group, each registering its
subcommands with `add_parsers(sub)` and calling the one function that does the work:

    certify.py    certify                               harness/certify/command.py
    clients.py    clients, clients-matrix               harness/clients/command.py, harness/clients/matrix.py
    matrix.py     matrix                                harness/orchestrate/matrix.py
    mutants.py    mutants                               harness/mutants/command.py
    fuzz.py       fuzz                                  harness/fuzz/command.py
    record.py     record                                harness/record/command.py
    upstream.py   serve-upstream                        harness/replay/server.py, harness/simulator/app.py
    report.py     report, verify-report                 harness/report/, harness/conformance/publish.py
    diff.py       diff                                  harness/conformance/diff.py, runs.py
    profiles.py   roles, new-profile, lint-specs        harness/modelmap.py, harness/spec/
    drift.py      drift                                 harness/drift.py

Exit codes: 0 all as expected, 1 unexpected failures, 2 the harness itself failed or the gateway does not answer
its API at all (an outage, one line), 3 bad configuration (one line on stderr, from the ConfigError the work raised),
130 / 143 stopped by SIGINT / SIGTERM (every process it started stopped, what it judged kept, one line).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from harness import __version__
from harness.cli import (
    certify,
    clients,
    diff,
    drift,
    fuzz,
    matrix,
    mutants,
    profiles,
    record,
    report,
    upstream,
)
from harness.errors import ConfigError, GatewayUnavailable, HarnessError, Interrupted
from harness.orchestrate.processes import handling_signals, signal_name, stop_all
from harness.outcomes import EXIT_CONFIG, EXIT_HARNESS, EXIT_OK

GROUPS = (certify, clients, matrix, mutants, fuzz, record, upstream, report, diff, profiles, drift)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gateway-conformance",
        description="Conformance suite for LLM gateways. Exit codes: 0 all as expected, 1 unexpected failures, "
        "2 the harness itself failed, 3 bad configuration.",
    )
    parser.add_argument("--version", action="version", version=f"gateway-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    console = argv is None  # the command itself, not a caller in-process (tests)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_CONFIG if exc.code not in (0, None) else EXIT_OK
    prog = f"gateway-conformance {args.command}"
    with handling_signals():
        try:
            return _run(args, prog)
        except Interrupted as exc:
            code = _interrupted(exc, prog)
        except BrokenPipeError:  # `… | head`: the reader has gone, which is no error of the command's
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
    # A request still in flight on some thread does not hold the command: everything it ran is stopped already.
    if console:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _interrupted(exc: Interrupted, prog: str) -> int:
    """SIGINT or SIGTERM: every process the command started stopped, one line, 128 + the signal (130, 143)."""
    stop_all()
    name = signal_name(exc.signum)
    if exc.where:
        said = (
            f"{exc.judged:,} rule variant(s) judged so far, written to {exc.where} marked interrupted (not a "
            "verdict)"
        )
    else:
        said = "nothing judged was written"
    print(f"{prog}: interrupted by {name}: {said}; every process it started is stopped", file=sys.stderr)
    return 128 + exc.signum


def _run(args: argparse.Namespace, prog: str) -> int:
    try:
        code: int = args.func(args)
    except ConfigError as exc:
        print(f"{prog}: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except GatewayUnavailable as exc:  # an outage, not the harness's failure: said as what it is (exit 2)
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    except HarnessError as exc:
        print(f"{prog}: harness failure: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    return code
