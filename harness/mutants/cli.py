"""`gateway-conformance mutants`: run mutant gateways against a profile's catalog and print the kill matrix.

Exit codes: 0 every mutant killed (or explained), 1 a mutant survived, 2 the harness failed, 3 bad configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from harness.errors import ConfigError, HarnessFailure
from harness.mutants.catalog import CatalogError, Mutant, load_catalog, select
from harness.mutants.kill import (
    Case,
    Matrix,
    MutantResult,
    broken_cases,
    case_key,
    cases_of,
    first_kill_order,
    kills_of,
    matrix_json,
    matrix_markdown,
    matrix_text,
    run_catalog,
)
from harness.mutants.proxy import ClientBook, ProxyServer
from harness.outcomes import EXIT_CONFIG, EXIT_HARNESS, EXIT_OK
from harness.replay.client import ReplayClient
from harness.runner import Target, not_applicable_reason

EXIT_SURVIVOR = 1  # a mutant survived: the suite has a rule that tests nothing
BASE_FEATURES = ("loopback-downloads",)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gateway-conformance mutants", description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="ezat", help="whose catalog and mutants (default ezat)")
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
        "--nonstream-timeout",
        type=float,
        default=None,
        metavar="S",
        help="with --gateway-url: your gateway's non-streaming limit (504 after S seconds); the reference "
        "gateway states its own",
    )
    p.add_argument("--list", action="store_true", help="list the selected mutants and exit")
    return p


@dataclass
class Rig:
    """What the mutants run through: the client-side proxy, the upstream-side proxy, the replay."""

    target: Target
    client: ProxyServer
    upstream: ProxyServer | None
    replay: ReplayClient
    http: httpx.Client

    def use(self, mutant: Mutant | None) -> None:
        self.client.set_mutant(mutant)
        if self.upstream is not None:
            self.upstream.set_mutant(mutant)


@contextlib.contextmanager
def rig(
    args: argparse.Namespace, profile_models: dict[str, str | None], features: frozenset[str], log: Path
) -> Iterator[Rig]:
    from harness.orchestrate import EMBEDDED_NONSTREAM_TIMEOUT, reference_gateway
    from harness.paths import cassettes_dir
    from harness.replay import ReplayServer

    book = ClientBook()
    with contextlib.ExitStack() as stack:
        if args.gateway_url:
            replay_url = args.replay_url.rstrip("/")
            upstream: ProxyServer | None = None
            if args.upstream_proxy_port:
                upstream = stack.enter_context(
                    ProxyServer(replay_url, "upstream", book, args.upstream_proxy_port)
                )
            gateway_url = args.gateway_url
            key = args.gateway_key or os.environ.get("GC_GATEWAY_KEY")
            nonstream_timeout = args.nonstream_timeout
        else:
            replay = stack.enter_context(ReplayServer(cassettes_dir()))
            replay_url = replay.url
            upstream = stack.enter_context(ProxyServer(replay_url, "upstream", book))
            key = "gc-" + secrets.token_hex(16)
            gateway_url = stack.enter_context(reference_gateway(args.profile, upstream.url, key, log))
            nonstream_timeout = EMBEDDED_NONSTREAM_TIMEOUT.get(args.profile)
        parts = urlsplit(gateway_url)
        client = stack.enter_context(ProxyServer(f"{parts.scheme}://{parts.netloc}", "client", book))
        target = Target(
            gateway_url=client.url + parts.path,
            gateway_key=key,
            models=profile_models,
            features=features,
            replay_url=replay_url,
            rule_timeout=args.rule_timeout,
            nonstream_timeout=nonstream_timeout,
        )
        limits = httpx.Limits(
            max_connections=max(8, args.jobs * 2), max_keepalive_connections=max(8, args.jobs * 2)
        )
        http = stack.enter_context(httpx.Client(trust_env=False, follow_redirects=False, limits=limits))
        replay_client = ReplayClient(replay_url)
        stack.callback(replay_client.close)
        yield Rig(target, client, upstream, replay_client, http)


def run_mutant(
    r: Rig,
    mutant: Mutant,
    cases: list[Case],
    broken: frozenset[str],
    jobs: int,
    first_kill: bool,
    base_features: frozenset[str],
) -> MutantResult:
    if mutant.side == "upstream" and r.upstream is None:
        return MutantResult(mutant, (), 0, 0.0, skipped="upstream-side mutant: no --upstream-proxy-port")
    missing = sorted(set(mutant.features) - base_features)
    if missing:
        # Like a rule, a mutant whose killers need an undeclared feature is not run (e.g. slow: 25 s pauses).
        return MutantResult(mutant, (), 0, 0.0, skipped=f"needs --feature {' '.join(missing)}")
    target = r.target
    started = time.monotonic()
    r.use(mutant)
    try:
        if first_kill:
            ordered = first_kill_order(cases, mutant.killed_by)
            outcomes = run_catalog(
                ordered, target, r.http, r.replay, jobs, stop=lambda o: bool(kills_of([o], broken))
            )
        else:
            outcomes = run_catalog(cases, target, r.http, r.replay, jobs)
    finally:
        r.use(None)
    return MutantResult(
        mutant,
        kills_of(outcomes, broken),
        len(outcomes),
        time.monotonic() - started,
        first_kill_only=first_kill,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return EXIT_CONFIG if exc.code not in (0, None) else EXIT_OK
    from harness.paths import specs_dir
    from harness.spec import SpecError, load_profile, load_rule_file, rule_files

    if args.gateway_url and not args.replay_url:
        print(
            "gateway-conformance mutants: --gateway-url needs --replay-url (the replay upstream your gateway "
            "talks to, or the upstream proxy's target)",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    try:
        catalog = load_catalog()
        profile = load_profile(args.profile)
        rules = [rule for f in rule_files(specs_dir() / args.profile) for rule in load_rule_file(f).rules]
    except (CatalogError, SpecError) as exc:
        print(f"gateway-conformance mutants: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    mutants = select(catalog.mutants, args.profile, args.mutant, args.sample, args.seed, args.always)
    if args.list:
        for m in mutants:
            print(f"{m.id:<40} {m.side:<8} {m.area:<10} {m.models}")
        return EXIT_OK
    if not mutants:
        print(f"gateway-conformance mutants: no mutant of profile {args.profile} matches", file=sys.stderr)
        return EXIT_CONFIG
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or Path("gc-mutants") / stamp).resolve()
    out.mkdir(parents=True, exist_ok=True)
    models: dict[str, str | None] = {role: spec.default for role, spec in profile.models.items()}
    base = frozenset(BASE_FEATURES) | frozenset(args.feature)
    cases = cases_of(rules)
    started = time.monotonic()
    results: list[MutantResult] = []
    try:
        with rig(args, models, base, out / "gateway.log") as r:
            applicable = {rule.id for rule in rules if not_applicable_reason(rule, r.target) is None}
            broken: frozenset[str] = frozenset()
            if not args.no_baseline:
                baseline = run_catalog(cases, r.target, r.http, r.replay, args.jobs)
                broken = broken_cases(baseline)
                print(
                    f"baseline: {len(baseline)} rule variants in {time.monotonic() - started:.1f}s, "
                    f"{len(broken)} failing without a mutant",
                    flush=True,
                )
            for i, mutant in enumerate(mutants, 1):
                result = run_mutant(r, mutant, cases, broken, args.jobs, args.first_kill, base)
                results.append(result)
                print(
                    f"[{i}/{len(mutants)}] {mutant.id}: {result.verdict} ({len(result.killers)} rules, "
                    f"{result.seconds:.1f}s)",
                    flush=True,
                )
    except ConfigError as exc:
        print(f"gateway-conformance mutants: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except (RuntimeError, HarnessFailure) as exc:
        print(f"gateway-conformance mutants: harness failure: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    all_of_profile = [m for m in catalog.mutants if args.profile in m.profiles]
    complete = (
        not args.first_kill and len(results) == len(all_of_profile) and not any(r.skipped for r in results)
    )
    rule_ids = tuple(dict.fromkeys(rule.id for rule in rules))
    matrix = Matrix(
        profile=args.profile,
        results=tuple(results),
        rules=tuple(rid for rid in rule_ids if rid in applicable),
        not_applicable=tuple(rid for rid in rule_ids if rid not in applicable),
        unmutated=catalog.unmutated,
        baseline_broken=tuple(sorted(broken)),
        seconds=time.monotonic() - started,
        complete=complete,
        extra={"jobs": args.jobs, "first_kill": args.first_kill, "sample": args.sample, "seed": args.seed},
    )
    (out / "kill-matrix.json").write_text(json.dumps(matrix_json(matrix), indent=2) + "\n", encoding="utf-8")
    (out / "kill-matrix.md").write_text(matrix_markdown(matrix), encoding="utf-8")
    print()
    print(matrix_text(matrix))
    if matrix.not_applicable:
        print(f"\nnot applicable in this run (cannot kill): {', '.join(matrix.not_applicable)}")
    print(f"\nwrote {out / 'kill-matrix.json'} and kill-matrix.md")
    if broken:
        return EXIT_HARNESS
    return EXIT_SURVIVOR if matrix.survivors else EXIT_OK


__all__ = ["case_key", "main"]
