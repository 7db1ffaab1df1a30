"""`gateway-conformance`: argument parsing only; the work is in harness.orchestrate, harness.report and
harness.replay. One module per command group: certify.py, upstream.py (serve-upstream), report.py, matrix.py,
profiles.py (roles, new-profile, lint-specs); the delegated commands (record, mutants, drift, fuzz, ...) parse
their own arguments.

Exit codes: 0 all as expected, 1 unexpected failures, 2 the harness itself failed, 3 bad configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness import __version__
from harness.cli import certify, matrix, profiles, report, upstream
from harness.errors import ConfigError, HarnessError
from harness.outcomes import EXIT_CONFIG, EXIT_HARNESS, EXIT_OK

# Subcommands that parse their own arguments: "module:function" taking argv (after the name).
DELEGATED = {
    "record": ("harness.record.run:main", "regenerate cassettes against a live provider"),
    "mutants": ("harness.mutants:main", "run mutant gateways against the catalogs (the kill matrix)"),
    "verify-report": (
        "harness.conformance.publish:verify_main",
        "re-check a conformance-report.yaml against the installed suite (schema, version, catalog hash)",
    ),
    "clients": ("harness.clients:main", "drive the client libraries (SDKs, frameworks) through a gateway"),
    "drift": ("harness.drift:main", "compare a new version of a gateway's doc with its rules and ledger"),
    "fuzz": (
        "harness.fuzz:main",
        "hostile requests against a gateway: no 5xx for a client error, envelopes, health",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gateway-conformance",
        description="Conformance suite for OpenAI-compatible LLM gateways. " + __doc__.splitlines()[-1],
    )
    parser.add_argument("--version", action="version", version=f"gateway-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    certify.certify_parser(sub)
    upstream.serve_upstream_parser(sub)
    report.report_parser(sub)
    matrix.matrix_parser(sub)
    profiles.roles_parser(sub)
    profiles.new_profile_parser(sub)
    profiles.lint_specs_parser(sub)
    for name, (_, help_text) in DELEGATED.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _delegate(name: str, argv: list[str]) -> int:
    import importlib

    module_name, func_name = DELEGATED[name][0].split(":")
    result: int = getattr(importlib.import_module(module_name), func_name)(argv)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in DELEGATED:
        return _delegate(argv[0], argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_CONFIG if exc.code not in (0, None) else EXIT_OK
    prog = f"gateway-conformance {args.command}"
    try:
        code: int = args.func(args)
    except ConfigError as exc:
        print(f"{prog}: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except HarnessError as exc:
        print(f"{prog}: harness failure: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    return code
