"""`gateway-conformance certify | serve-upstream`: the commands a user runs.

Exit codes: 0 all as expected, 1 unexpected failures, 2 the harness itself failed, 3 bad configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILURES, EXIT_HARNESS, EXIT_CONFIG = 0, 1, 2, 3
KEY_ENV = "GC_GATEWAY_KEY"


class ConfigError(Exception):
    """Bad configuration: exit 3 with this message."""


class HarnessFailure(Exception):
    """The suite itself could not do its job: exit 2 with this message."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Run:
    """One profile certified against one gateway."""

    profile: str
    gateway_url: str
    description: str
    replay_url: str | None
    features: tuple[str, ...]
    model_map: str | None = None
    upstream: str = "replay"


# --- the embedded reference gateway --------------------------------------------------------------


# What the embedded reference gateway is started with, per profile, declared to the rules as features:
# it may fetch images from the harness's loopback file server; its lyrouter workspace has a Default Model.
EMBEDDED_FEATURES: dict[str, tuple[str, ...]] = {
    "ezat": ("loopback-downloads",),
    "lyrouter": ("loopback-downloads", "workspace-default-model"),
}


def embedded_features(profile: str) -> tuple[str, ...]:
    return EMBEDDED_FEATURES.get(profile, ("loopback-downloads",))


@contextlib.contextmanager
def reference_gateway(profile: str, upstream_url: str, key: str, log: Path) -> Iterator[str]:
    """Start `python -m reference_gateway` on a free loopback port; yield its OpenAI base URL; stop it."""
    port = _free_port()
    env = {**os.environ, "REFERENCE_GATEWAY_API_KEYS": key, "ANTHROPIC_API_KEY": "gc-replay-upstream-key"}
    cmd = [
        sys.executable,
        "-m",
        "reference_gateway",
        "--profile",
        profile,
        "--upstream-url",
        upstream_url,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--allow-image-host",
        "127.0.0.1",
    ]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            _wait_healthy(f"http://127.0.0.1:{port}/healthz", proc, log)
            yield f"http://127.0.0.1:{port}/openai/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise HarnessFailure(f"the reference gateway exited with code {proc.returncode}:\n{tail}")
        try:
            if httpx.get(url, timeout=1.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise HarnessFailure(
        f"the reference gateway did not become healthy at {url} within {timeout:g}s (log: {log})"
    )


# --- running the rules ------------------------------------------------------------------------------


def run_pytest(run: Run, out_dir: Path, key: str | None, extra: Sequence[str]) -> dict[str, Any]:
    """Run one profile's catalog with the plugin in a child pytest; return its results document."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ini = out_dir / "pytest.ini"
    # An empty ini of our own: the user's (or this repo's) pytest configuration must not leak in.
    ini.write_text("[pytest]\n", encoding="utf-8")
    results = out_dir / "results.json"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(ini),
        "--rootdir",
        str(out_dir),
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
        "-rN",
        "--gateway-url",
        run.gateway_url,
        "--profile",
        run.profile,
        "--report-json",
        str(results),
        "--junitxml",
        str(out_dir / "junit.xml"),
        "-o",
        "junit_family=xunit2",
        "-o",
        f"junit_suite_name=gateway-conformance-{run.profile}",
    ]
    if run.upstream == "live":
        cmd += ["--upstream", "live"]
    elif run.replay_url:
        cmd += ["--replay-url", run.replay_url]
    if run.model_map:
        cmd += ["--model-map", run.model_map]
    for feature in run.features:
        cmd += ["--feature", feature]
    cmd += list(extra)
    env = dict(os.environ)
    env.pop(KEY_ENV, None)
    if key:
        env[KEY_ENV] = key
    proc = subprocess.run(cmd, env=env, check=False)
    if proc.returncode in (3, 4) or not results.is_file():
        raise HarnessFailure(
            f"pytest could not run the {run.profile} catalog (exit {proc.returncode}); "
            f"command: {' '.join(cmd)}"
        )
    document: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    document["target"]["description"] = run.description
    results.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return document


def summarize(documents: Sequence[dict[str, Any]]) -> str:
    """A plain-text table per profile and area: pass, fail, warn, n/a, harness errors."""
    header = f"{'profile':<10} {'area':<14} {'pass':>5} {'fail':>5} {'warn':>5} {'n/a':>5} {'error':>6}"
    lines = [header, "-" * len(header)]
    for doc in documents:
        areas: dict[str, dict[str, int]] = {}
        for result in doc["results"]:
            counts = areas.setdefault(result["area"], {})
            counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
        rows = [*sorted(areas.items()), ("(all)", doc["totals"])]
        for area, c in rows:
            lines.append(
                f"{doc['profile']['name']:<10} {area:<14} {c.get('PASS', 0):>5} {c.get('FAIL', 0):>5} "
                f"{c.get('WARN', 0):>5} {c.get('NOT_APPLICABLE', 0):>5} {c.get('HARNESS_ERROR', 0):>6}"
            )
    return "\n".join(lines)


def exit_code(documents: Sequence[dict[str, Any]]) -> int:
    if any(d["totals"].get("HARNESS_ERROR", 0) or d.get("collection_errors", 0) for d in documents):
        return EXIT_HARNESS
    if any(
        d["totals"].get("FAIL", 0) or d["totals"].get("XPASS", 0) or d.get("expectation_problems")
        for d in documents
    ):
        return EXIT_FAILURES
    return EXIT_OK


def profiles_with_rules() -> list[str]:
    from harness.paths import specs_dir
    from harness.spec import rule_files
    from harness.spec.loader import available_profiles

    return [p for p in available_profiles() if any(rule_files(specs_dir() / p))]


def certify(args: argparse.Namespace) -> int:
    from harness.paths import cassettes_dir
    from harness.spec.loader import available_profiles

    known = available_profiles()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    report_dir = Path(args.report_dir or Path("gc-report") / stamp).resolve()
    extra = [a for rule in args.rule for a in ("--rule", rule)]
    if args.strict:
        extra.append("--strict-rules")
    if args.workers:
        extra += ["-n", str(args.workers)]
    if args.expectations:
        if not Path(args.expectations).is_file():
            raise ConfigError(f"--expectations {args.expectations}: no such file")
        extra += ["--expectations", str(Path(args.expectations).resolve())]
    if args.write_expectations:
        extra += ["--write-expectations", str(Path(args.write_expectations).resolve())]
    documents: list[dict[str, Any]] = []

    if args.gateway_url:
        if not args.profile or len(args.profile) != 1:
            raise ConfigError("--gateway-url needs exactly one --profile NAME")
        if args.profile[0] not in known:
            raise ConfigError(f"unknown profile {args.profile[0]!r} (known: {', '.join(known)})")
        if args.model_map and not Path(args.model_map).is_file():
            raise ConfigError(f"--model-map {args.model_map}: no such file")
        key = args.gateway_key or os.environ.get(KEY_ENV)
        with _replay_for_target(args) as replay_url:
            run = Run(
                profile=args.profile[0],
                gateway_url=args.gateway_url,
                description=args.gateway_url,
                replay_url=replay_url,
                features=tuple(args.feature),
                model_map=str(Path(args.model_map).resolve()) if args.model_map else None,
                upstream=args.upstream,
            )
            print(
                f"certifying {args.gateway_url} against profile {run.profile} (upstream: {args.upstream}"
                f"{'' if not replay_url else ' at ' + replay_url})",
                flush=True,
            )
            documents.append(run_pytest(run, report_dir / run.profile, key, extra))
    else:
        profiles = args.profile or profiles_with_rules()
        unknown = [p for p in profiles if p not in known]
        if unknown:
            raise ConfigError(f"unknown profile(s) {', '.join(unknown)} (known: {', '.join(known)})")
        if not profiles:
            raise HarnessFailure("no profile has rules to run")
        from harness.replay import ReplayServer

        key = "gc-" + secrets.token_hex(16)
        with ReplayServer(cassettes_dir()) as replay:
            for profile in profiles:
                with reference_gateway(profile, replay.url, key, report_dir / profile / "gateway.log") as url:
                    run = Run(
                        profile=profile,
                        gateway_url=url,
                        description="reference gateway (embedded)",
                        replay_url=replay.url,
                        features=(*embedded_features(profile), *args.feature),
                    )
                    print(
                        f"certifying the embedded reference gateway against profile {profile} "
                        f"(replay upstream at {replay.url})",
                        flush=True,
                    )
                    documents.append(run_pytest(run, report_dir / profile, key, extra))

    from harness.report import write_reports

    write_reports(report_dir, documents)
    print()
    print(summarize(documents))
    print(f"\nreport: {report_dir}")
    code = exit_code(documents)
    print(
        {
            EXIT_OK: "verdict: all rules as expected",
            EXIT_FAILURES: "verdict: unexpected failures",
            EXIT_HARNESS: "verdict: the harness itself failed (HARNESS_ERROR); see the report",
        }[code]
    )
    return code


@contextlib.contextmanager
def replay_upstream(port: int | None = None, url: str | None = None) -> Iterator[str]:
    """The replay upstream to use: the one at `url`, or one served here on 127.0.0.1:`port` (0/None: free)."""
    if url:
        yield url.rstrip("/")
        return
    from harness.paths import cassettes_dir
    from harness.replay import ReplayServer

    server = ReplayServer(cassettes_dir(), port=port or 0)
    try:
        server.start()
    except OSError as exc:
        raise ConfigError(f"--replay-port {port}: {exc}") from exc
    try:
        yield server.url
    finally:
        server.stop()


@contextlib.contextmanager
def _replay_for_target(args: argparse.Namespace) -> Iterator[str | None]:
    if args.upstream == "live":
        yield None
        return
    if not args.replay_url and args.replay_port is None:
        raise ConfigError(
            "certifying your own gateway in replay mode needs --replay-port P (the harness serves the "
            "replay upstream on 127.0.0.1:P; point your gateway's Anthropic base URL there) or "
            "--replay-url URL, or --upstream live"
        )
    with replay_upstream(args.replay_port, args.replay_url) as url:
        yield url


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gateway-conformance", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser(
        "certify",
        help="run the rules and write a report (default: the embedded reference gateway, every profile)",
    )
    c.add_argument("--gateway-url", help="your gateway's OpenAI base URL (e.g. http://127.0.0.1:8080/v1)")
    c.add_argument("--gateway-key", help=f"its API key (default: ${KEY_ENV})")
    c.add_argument(
        "--profile", action="append", help="profile(s) to certify (repeatable; with --gateway-url: one)"
    )
    c.add_argument("--model-map", help="YAML mapping of model roles to your model ids")
    c.add_argument(
        "--replay-port", type=int, help="serve the replay upstream on 127.0.0.1:P for your gateway"
    )
    c.add_argument("--replay-url", help="use a replay upstream already running (serve-upstream)")
    c.add_argument("--upstream", choices=("replay", "live"), default="replay")
    c.add_argument("--feature", action="append", default=[], help="declare an optional feature (repeatable)")
    c.add_argument("--rule", action="append", default=[], help="only rules whose id matches this glob")
    c.add_argument("--strict", action="store_true", help="failed SHOULD rules fail the run")
    c.add_argument("--report-dir", help="where to write the report (default: ./gc-report/<UTC time>)")
    c.add_argument(
        "--expectations", help="known failures of this gateway (XFAIL); see specs/schema/expectations"
    )
    c.add_argument("--write-expectations", help="write an expectations file from this run's failures")
    c.add_argument("-n", "--workers", type=int, help="run rules in N parallel workers (pytest-xdist)")

    for name, (_, help_text) in DELEGATED.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


# Subcommands that own their arguments: "module:function" taking argv (after the name), returning an exit code.
DELEGATED = {
    "serve-upstream": (
        "harness.replay:serve_upstream_main",
        "run the replay upstream standalone for any gateway",
    ),
    "record": ("harness.record:main", "regenerate cassettes against a live provider"),
    "matrix": ("harness.matrix:main", "rule-by-gateway compatibility matrix across profiles"),
    "report": (
        "harness.report:main",
        "render reports (HTML certificate, Markdown, badge) from results files",
    ),
    "mutants": ("harness.mutants:main", "run mutant gateways against the catalogs (the kill matrix)"),
}


def _delegate(name: str, argv: list[str]) -> int:
    import importlib

    target, _ = DELEGATED[name]
    module_name, func_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(f"gateway-conformance: '{name}' is not available in this version", file=sys.stderr)
        return EXIT_CONFIG
    result: int = getattr(module, func_name)(argv)
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
    try:
        if args.command == "certify":
            return certify(args)
    except ConfigError as exc:
        print(f"gateway-conformance: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except HarnessFailure as exc:
        print(f"gateway-conformance: harness failure: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    parser.print_help()
    return EXIT_CONFIG


if __name__ == "__main__":
    sys.exit(main())
