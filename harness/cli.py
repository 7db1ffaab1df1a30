"""`gateway-conformance`: argument parsing only; the work is in harness.orchestrate, harness.report and
harness.replay.

Exit codes: 0 all as expected, 1 unexpected failures, 2 the harness itself failed, 3 bad configuration.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from harness import __version__
from harness.errors import ConfigError, HarnessError
from harness.options import add_certify_options
from harness.outcomes import EXIT_CONFIG, EXIT_FAILURES, EXIT_HARNESS, EXIT_OK, KEY_ENV

# --- certify --------------------------------------------------------------------------------------


def _certify_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser(
        "certify",
        help="run the rules and write a report (default: the embedded reference gateway, every profile)",
        description="Run the rules and write a report folder (results.json, junit.xml, summary.md, "
        "certificate.html, badge.svg). Without --gateway-url: the embedded reference gateway, every profile.",
    )
    add_certify_options(c)
    c.add_argument("--report-dir", help="where to write the report (default: ./gc-report/<UTC time>)")
    c.add_argument("-n", "--workers", type=int, help="run rules in N parallel workers (pytest-xdist)")
    c.add_argument(
        "--fuzz-examples",
        type=int,
        default=40,
        metavar="N",
        help="embedded run: also send N hostile requests to each profile's gateway (fixed seed; its "
        "`robustness` area; 0: none; default 40; not with --rule). `gateway-conformance fuzz` runs more.",
    )
    c.set_defaults(func=certify)


def certify(args: argparse.Namespace) -> int:
    from harness.certify import certify as run_certify

    return run_certify(args)


# --- serve-upstream -------------------------------------------------------------------------------


def _serve_upstream_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve-upstream",
        help="run the replay upstream standalone for any gateway",
        description="Run the replay upstream (cassettes by case marker, fault injection, image fixtures) "
        "so a gateway started by hand can be pointed at it.",
    )
    p.add_argument(
        "--port", type=int, default=8765, help="port to listen on (0 picks a free one; default 8765)"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--cassettes", type=Path, default=None, help="cassettes directory (default: the bundled cassettes/)"
    )
    p.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="allow binding a non-loopback address. Off by default: the control API lets anyone who can "
        "reach it register cases and read every request the gateway forwarded, including its upstream "
        "API key headers.",
    )
    p.add_argument(
        "--simulate",
        action="store_true",
        help="serve the live provider simulator instead: Anthropic Messages and OpenAI-compatible Chat "
        "Completions answered from the request alone, like a real model (try --upstream live offline)",
    )
    p.set_defaults(func=serve_upstream)


def serve_upstream(args: argparse.Namespace) -> int:
    from harness import paths
    from harness.replay.server import bind_foreground, is_loopback, serve_foreground

    if not is_loopback(args.host) and not args.allow_non_loopback:
        raise ConfigError(
            f"refusing to bind {args.host}: not a loopback address (pass --allow-non-loopback to "
            "override; anyone who can reach the port can read the forwarded requests and their API key "
            "headers)"
        )
    try:
        sock, url = bind_foreground(args.host, args.port)
    except OSError as exc:
        raise ConfigError(f"cannot bind {args.host}:{args.port}: {exc}") from exc
    if args.simulate:
        from harness.replay.sim_app import serve_simulator_foreground

        print(f"live provider simulator listening on {url} (answers from the request alone; no cassettes)")
        print(f"  Anthropic base URL for the gateway:           {url}   (it will POST {url}/v1/messages)")
        print(f"  OpenAI-compatible upstream base URL:          {url}/v1")
        print("  then: pytest --gateway-url <your gateway's OpenAI base URL> --upstream live")
        print("Ctrl-C to stop.", flush=True)
        serve_simulator_foreground(sock)
        print("simulator stopped.")
        return EXIT_OK
    cassettes = args.cassettes if args.cassettes is not None else paths.cassettes_dir()
    print(f"replay upstream listening on {url} (cassettes: {cassettes})")
    print(f"  Anthropic base URL for the gateway:           {url}   (it will POST {url}/v1/messages)")
    print(f"  OpenAI-compatible upstream base URL:          {url}/v1")
    print(f"  image fixtures (${{images_url}}):              {url}/__gc/files")
    print(f"  then: pytest --gateway-url <your gateway's OpenAI base URL> --replay-url {url}")
    print("Ctrl-C to stop.", flush=True)
    serve_foreground(sock, cassettes)
    print("replay upstream stopped.")
    return EXIT_OK


# --- report ---------------------------------------------------------------------------------------


def _report_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="render reports (HTML certificate, Markdown, badge) from results files",
        description="Render the Markdown summary, HTML certificate and SVG badge from results files "
        "(one per profile, as certify or `pytest --report-json` wrote them).",
    )
    p.add_argument("results", nargs="+", type=Path, help="results.json file(s)")
    p.add_argument("--out", required=True, type=Path, help="directory to write the reports into")
    p.set_defaults(func=report)


def report(args: argparse.Namespace) -> int:
    from harness.report import load_results, write_reports

    documents = [load_results(path) for path in args.results]
    try:
        write_reports(args.out, documents)
    except OSError as exc:
        raise ConfigError(f"cannot write to {args.out}: {exc}") from exc
    for name in ("summary.md", "certificate.html", "badge.svg"):
        print(args.out / name)
    return EXIT_OK


# --- matrix ---------------------------------------------------------------------------------------


def _gateway(text: str) -> tuple[str, str]:
    name, sep, url = text.partition("=")
    if not sep or not name or not url.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"expected NAME=URL (the gateway's OpenAI base URL), got {text!r}")
    return name, url


def _matrix_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    from harness.orchestrate import fresh_output, run_matrix
    from harness.report.matrix import column_status, matrix_rows, write_matrix

    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out_dir = Path(args.out or Path("gc-matrix") / stamp).resolve()
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()] if args.profiles else None
    with fresh_output(out_dir):
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


# --- roles ----------------------------------------------------------------------------------------


def _roles_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "roles",
        help="list a profile's model roles and optional features; draft a model map",
        description="List the model roles ($MODEL, ...) a profile's rules use and the optional features "
        "they can declare, with what each means. With --write-model-map FILE --gateway-url URL: draft a "
        "model map from the gateway's GET /models.",
    )
    p.add_argument("--profile", required=True, metavar="NAME", help="whose roles and features to list")
    p.add_argument(
        "--specs-dir", metavar="DIR", help="read the profile from DIR (default: the bundled specs/)"
    )
    p.add_argument(
        "--write-model-map", metavar="FILE", type=Path, help="write a draft model map (needs --gateway-url)"
    )
    p.add_argument("--gateway-url", metavar="URL", help="the gateway's OpenAI base URL (for GET URL/models)")
    p.add_argument("--gateway-key", metavar="KEY", help=f"the gateway's API key (default: ${KEY_ENV})")
    p.set_defaults(func=roles)


def roles(args: argparse.Namespace) -> int:
    from harness.paths import specs_root
    from harness.spec import load_profile

    profile = load_profile(args.profile, specs_root(args.specs_dir))
    print(f"profile {profile.name}: {profile.title}")
    print(f"  doc: {profile.doc}" + (f"; base path {profile.base_path}" if profile.base_path else ""))
    print(
        "\nmodel roles (map them to your ids with --model-map FILE; null makes a role's rules NOT_APPLICABLE):"
    )
    for role, spec in sorted(profile.models.items()):
        print(f"  {role:<22} default {spec.default}\n  {'':<22} {spec.description}")
    print("\noptional features (declare the ones your gateway has or your run allows with --feature NAME):")
    for name, meaning in sorted(profile.features.items()):
        print(f"  {name:<22} {meaning}")
    if not profile.features:
        print("  (none)")
    if args.write_model_map is None:
        return EXIT_OK
    if not args.gateway_url:
        raise ConfigError("--write-model-map needs --gateway-url (the map is drafted from GET <URL>/models)")
    from harness.modelmap import draft_model_map, list_models

    url = args.gateway_url.rstrip("/") + "/models"
    ids = list_models(url, args.gateway_key or os.environ.get(KEY_ENV))
    try:
        args.write_model_map.write_text(draft_model_map(profile, ids, f"GET {url}"), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {args.write_model_map}: {exc}") from exc
    print(
        f"\nwrote a draft model map to {args.write_model_map} ({len(ids)} model ids listed); check each TODO"
    )
    return EXIT_OK


# --- your own gateway's profile: new-profile, lint-specs -----------------------------------------


def _new_profile_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "new-profile",
        help="scaffold a profile for your own gateway's docs (run it with --specs-dir)",
        description="Write DIR/NAME/profile.yaml, a first rule file, DIR/coverage/NAME.yaml (every sentence "
        "of the doc, each still to map) and a copy of the doc under DIR/docs/. Then write rules, map the "
        "sentences, check with `lint-specs --specs-dir DIR`, and run with `certify --specs-dir DIR`.",
    )
    p.add_argument("name", metavar="NAME", help="the profile name (lowercase letters, digits, dashes)")
    p.add_argument("--doc", required=True, type=Path, metavar="FILE", help="your gateway's doc (Markdown)")
    p.add_argument(
        "--specs-dir",
        type=Path,
        default=Path("specs"),
        metavar="DIR",
        help="where to write (default ./specs)",
    )
    p.set_defaults(func=new_profile)


def new_profile(args: argparse.Namespace) -> int:
    from harness.spec.scaffold import scaffold

    files = scaffold(args.name, args.doc, args.specs_dir.resolve())
    for path in files:
        print(f"wrote {path}")
    print(
        f"\nnext: map the sentences in {files[2].name}, write rules, then\n"
        f"  gateway-conformance lint-specs --specs-dir {args.specs_dir}\n"
        f"  gateway-conformance certify --specs-dir {args.specs_dir} --profile {args.name} "
        "--gateway-url URL --replay-port P"
    )
    return EXIT_OK


def _lint_specs_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "lint-specs",
        help="validate a specs dir: schemas, rule ids, roles and features, ledger, quotes in the doc",
        description="Check every profile of a specs dir as the suite would use it: profile and rule files "
        "against their schemas, rule ids, declared roles and features, each rule's quote present in the doc, "
        "and the coverage ledger (quotes, rule ids, every rule listed, no sentence left to map). "
        "Exit 0 when clean, 1 with the problems listed.",
    )
    p.add_argument(
        "--specs-dir", type=Path, metavar="DIR", help="the specs dir (default: the bundled specs/)"
    )
    p.add_argument(
        "--profile", action="append", default=[], metavar="NAME", help="only this profile (repeatable)"
    )
    p.add_argument(
        "--docs-dir",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="where the docs (<doc>.md) are (repeatable; default: DIR/docs and the shared docs next to it)",
    )
    p.set_defaults(func=lint_specs)


def lint_specs(args: argparse.Namespace) -> int:
    from harness.paths import specs_root
    from harness.spec.lint import lint
    from harness.spec.loader import available_profiles

    root = specs_root(args.specs_dir)
    if not root.is_dir():
        raise ConfigError(f"--specs-dir {args.specs_dir}: no such directory")
    names = args.profile or available_profiles(root)
    if not names:
        raise ConfigError(f"{root}: no profile (no <name>/profile.yaml)")
    docs = list(args.docs_dir)
    if os.environ.get("GC_SHARED_DIR"):  # where the test suite also finds the bundled profiles' docs
        docs.append(Path(os.environ["GC_SHARED_DIR"]) / "docs")
    problems = lint(root, names, docs)
    for problem in problems:
        print(problem)
    print(f"{len(names)} profile(s) checked under {root}: {len(problems) or 'no'} problem(s)")
    return EXIT_FAILURES if problems else EXIT_OK


# --- the command ----------------------------------------------------------------------------------

# Subcommands that parse their own arguments: "module:function" taking argv (after the name).
DELEGATED = {
    "record": ("harness.replay.record:main", "regenerate cassettes against a live provider"),
    "mutants": ("harness.mutants:main", "run mutant gateways against the catalogs (the kill matrix)"),
    "drift": ("harness.drift:main", "compare a new version of a gateway's doc with its rules and ledger"),
    "fuzz": (
        "harness.fuzz:main",
        "hostile requests against a gateway: no 5xx for a client error, envelopes, health",
    ),
    "clients": ("harness.clients:main", "drive the client libraries (SDKs, frameworks) through a gateway"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gateway-conformance",
        description="Conformance suite for OpenAI-compatible LLM gateways. " + __doc__.splitlines()[-1],
    )
    parser.add_argument("--version", action="version", version=f"gateway-conformance {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _certify_parser(sub)
    _serve_upstream_parser(sub)
    _report_parser(sub)
    _matrix_parser(sub)
    _roles_parser(sub)
    _new_profile_parser(sub)
    _lint_specs_parser(sub)
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


if __name__ == "__main__":
    sys.exit(main())
