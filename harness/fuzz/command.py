"""`gateway-conformance fuzz`: the command's work (harness/cli/fuzz.py parses its arguments): the profiles to
fuzz, the gateway (embedded or yours) behind the tapped replay upstream, the failures printed, the results
written in certify's report format (area `robustness`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.errors import FuzzConfigError
from harness.fuzz.run import ProfileRun, fuzz_profile
from harness.fuzz.tap import tapped_replay
from harness.orchestrate.embedded import mapped_models
from harness.outcomes import EXIT_FAILURES, EXIT_OK, KEY_ENV


def embedded_pairs(profiles: Sequence[str] | None) -> list[tuple[str, str]]:
    """(catalog, reference gateway profile) pairs the embedded fuzz runs: each catalog on every gateway profile
    that serves it, so that every endpoint of every profile is fuzzed (issue 47) — by default every catalog but
    `openai`, whose endpoint is each gateway's own chat endpoint, fuzzed under the gateway's own profile."""
    from harness.orchestrate.child import profiles_with_rules
    from harness.orchestrate.embedded_catalog import gateways_for

    known = profiles_with_rules()
    unknown = [p for p in profiles or () if p not in known]
    if unknown:
        raise FuzzConfigError(
            f"no profile {', '.join(unknown)}; fuzz one of {', '.join(known)}, or your gateway with --gateway-url"
        )
    chosen = list(profiles) if profiles else [p for p in known if p != "openai"]
    return [(profile, gateway) for profile in chosen for gateway in gateways_for(profile)]


def _by_gateway(pairs: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for profile, gateway in pairs:
        grouped.setdefault(gateway, []).append(profile)
    return grouped


def _summary(run: ProfileRun, gateway: str | None = None) -> str:
    f = run.figures
    on = f" on {gateway}" if gateway and gateway != run.profile else ""
    return (
        f"fuzz {run.profile}{on}: {f.examples} examples in {f.seconds:.1f}s — 5xx {f.server_errors}, non-envelope "
        f"{f.non_envelope}, invalid upstream JSON {f.invalid_upstream_json}, refused but sent upstream "
        f"{f.refused_reaching_upstream}, hangs {f.hangs}, upstream requests {f.upstream_requests}"
        + ("" if run.observed_upstream else " (upstream not observed)")
    )


def _print_failure(run: ProfileRun) -> None:
    failure = run.failure
    if failure is None:
        return
    case = failure.exchange.case
    print(
        f"\nFAIL {run.profile}: hypothesis's shrunk minimal example ({case.kind}: {case.note}; {failure.found})",
        file=sys.stderr,
    )
    for violation in failure.violations:
        print(f"  {violation.rule_id}: {violation.message}", file=sys.stderr)
    body = repr(case.body) if len(case.body) <= 600 else f"{case.body[:600]!r}... ({len(case.body)} bytes)"
    print(f"  content-type: {case.content_type!r}\n  body: {body}", file=sys.stderr)
    print(f"  repro: {failure.curl}", file=sys.stderr)


def _write(
    run: ProfileRun, out_dir: Path, args: argparse.Namespace, replay_url: str | None, description: str
) -> Path:
    from harness.fuzz.document import results_document

    document = results_document(
        run, examples=args.examples, seed=args.seed, replay_url=replay_url, description=description
    )
    path = out_dir / run.profile / "robustness.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _check_catalogs(profiles: Sequence[str] | None) -> None:
    """A profile whose rule files do not load is bad configuration here too (the fuzz reads its profile)."""
    from harness.errors import RuleCatalogError
    from harness.orchestrate.child import profiles_with_rules
    from harness.paths import specs_dir
    from harness.spec.collection import check_catalog

    try:
        check_catalog([specs_dir() / p for p in (profiles or profiles_with_rules())])
    except RuleCatalogError as exc:
        raise FuzzConfigError(str(exc)) from exc


def _run(args: argparse.Namespace) -> int:
    from harness.report.folder import fresh_report_dir

    if args.examples < 1:
        raise FuzzConfigError("--examples must be at least 1")
    if args.gateway_url and (not args.profile or len(args.profile) != 1):
        raise FuzzConfigError("--gateway-url needs exactly one --profile NAME")
    _check_catalogs(args.profile)
    # A folder of this run's own, writable, checked before any example is sent (issue 48).
    with fresh_report_dir(args.report_dir, "gc-report", prefix="fuzz-") as out_dir:
        runs = _fuzz(args, out_dir)
    return _report(runs)


def _fuzz(args: argparse.Namespace, out_dir: Path) -> list[ProfileRun]:
    """Each profile fuzzed (yours, or every embedded one), its results written into `out_dir` as it ends."""
    budget = {
        "examples": args.examples,
        "seconds": args.seconds,
        "seed": args.seed,
        "timeout": args.rule_timeout,
    }
    runs: list[ProfileRun] = []
    if args.gateway_url:
        key = args.gateway_key or os.environ.get(KEY_ENV)
        with contextlib.ExitStack() as stack:
            replay_url, tap = None, None
            if args.replay_port is not None:
                replay_url, tap = stack.enter_context(tapped_replay(args.replay_port))
                print(
                    f"replay upstream (observed) at {replay_url}; point your gateway's upstream there",
                    flush=True,
                )
            run = fuzz_profile(
                args.profile[0], args.gateway_url, key, tap, models=args.model, spill_dir=out_dir, **budget
            )
            runs.append(run)
            print(_summary(run), flush=True)
            print(f"results: {_write(run, out_dir, args, replay_url, args.gateway_url)}", flush=True)
    else:
        from harness.orchestrate.embedded import reference_gateway

        pairs = embedded_pairs(args.profile)
        launch = reference_gateway
        key = secrets.token_urlsafe(24)
        with tapped_replay() as (replay_url, tap):
            for gateway, catalogs in _by_gateway(pairs).items():
                log = out_dir / gateway / "gateway.log"
                with launch(gateway, replay_url, key, log) as url:
                    for profile in catalogs:
                        models = args.model or mapped_models(profile, gateway)
                        run = fuzz_profile(profile, url, key, tap, models=models, spill_dir=out_dir, **budget)
                        runs.append(run)
                        print(_summary(run, gateway), flush=True)
                        where = out_dir if gateway == profile else out_dir / gateway
                        description = "reference gateway (embedded)" + (
                            "" if gateway == profile else f", profile {gateway}"
                        )
                        print(f"results: {_write(run, where, args, replay_url, description)}", flush=True)
    return runs


def _report(runs: Sequence[ProfileRun]) -> int:
    for run in runs:
        _print_failure(run)
        if run.healthy is not None:
            print(f"\nFAIL {run.profile}: {run.healthy}", file=sys.stderr)
    broken = [r.profile for r in runs if r.failure is not None or r.healthy is not None]
    print(
        "verdict: " + (f"invariants broken ({', '.join(broken)})" if broken else "nothing found"), flush=True
    )
    return EXIT_FAILURES if broken else EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Exit codes: 0 nothing found, 1 an invariant broken, 2 the harness failed, 3 bad configuration."""
    return _run(args)
