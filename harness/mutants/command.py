"""`gateway-conformance mutants`: run mutant gateways against a profile's catalog and print the kill matrix
(the arguments are harness/cli/mutants.py's).

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

from harness.engine.target import Outcome, Target, not_applicable_reason
from harness.errors import ConfigError, HarnessFailure, MutantCatalogError
from harness.mutants.catalog import Mutant, MutantCatalog, load_catalog, select
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
    merge_matrices,
    run_catalog,
)
from harness.mutants.proxy import ClientBook, ProxyServer
from harness.mutants.schedule import MutantRouting, run_pairs
from harness.outcomes import EXIT_CONFIG, EXIT_HARNESS, EXIT_OK
from harness.replay.client import ReplayClient

EXIT_SURVIVOR = 1  # a mutant survived: the suite has a rule that tests nothing
# What another gateway (--gateway-url) is declared to do unless told more: fetch the harness's loopback images.
# The embedded reference gateway is declared as certify declares it (harness.orchestrate.embedded).
BASE_FEATURES = ("loopback-downloads",)


def base_features(args: argparse.Namespace) -> frozenset[str]:
    """The features the run declares: the embedded gateway's own (as certify declares them), or BASE_FEATURES
    for another gateway, plus --feature."""
    from harness.orchestrate.embedded import embedded

    declared = BASE_FEATURES if args.gateway_url else embedded(args.profile, reference_of(args)).features
    return frozenset(declared) | frozenset(args.feature)


def reference_of(args: argparse.Namespace) -> str | None:
    """The reference gateway profile --reference-gateway names (None: the catalog's first)."""
    return getattr(args, "reference_gateway", None)


def mutated(args: argparse.Namespace) -> str:
    """Whose mutants run: the catalog's (`responses`), or with --reference-gateway those written for that
    reference gateway profile's own path (`responses@lyrouter`: its native Responses pass-through)."""
    gateway = reference_of(args)
    return f"{args.profile}@{gateway}" if gateway else args.profile


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` → (I, N) with 1 <= I <= N."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard {text}: expected I/N, e.g. 2/4") from None
    if not 1 <= i <= n:
        raise ValueError(f"--shard {text}: I must be between 1 and N")
    return i, n


def shard_of(mutants: Sequence[Mutant], i: int, n: int) -> list[Mutant]:
    """Slice I of N: every N-th mutant from the I-th (catalog order), so slow areas spread over shards."""
    return [m for k, m in enumerate(mutants) if k % n == i - 1]


@dataclass
class Rig:
    """What the mutants run through: the client-side proxy, the upstream-side proxy, the replay."""

    target: Target
    client: ProxyServer
    upstream: ProxyServer | None
    replay: ReplayClient
    http: httpx.Client
    routing: MutantRouting

    def use(self, mutant: Mutant | None) -> None:
        self.client.set_mutant(mutant)
        if self.upstream is not None:
            self.upstream.set_mutant(mutant)


@contextlib.contextmanager
def rig(
    args: argparse.Namespace,
    profile_models: dict[str, str | None],
    features: frozenset[str],
    log: Path,
    mutants: Sequence[Mutant] = (),
) -> Iterator[Rig]:
    from harness.engine.target import KEEPALIVE_SILENCE_DEFAULT
    from harness.featuresetup import load_feature_setup
    from harness.orchestrate.embedded import embedded, reference_gateway
    from harness.paths import cassettes_dir
    from harness.replay.server import ReplayServer
    from harness.spec import load_profile

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
            silence = args.keepalive_silence or KEEPALIVE_SILENCE_DEFAULT
            nonstream_timeout = args.nonstream_timeout
            setup_file = getattr(args, "implementation", None)
        else:
            replay = stack.enter_context(ReplayServer(cassettes_dir()))
            replay_url = replay.url
            upstream = stack.enter_context(ProxyServer(replay_url, "upstream", book))
            key = "gc-" + secrets.token_hex(16)
            declared = embedded(args.profile, reference_of(args))
            # Profile openai: the reference gateway in another profile, with its model map (embedded_catalog).
            gateway_url = stack.enter_context(reference_gateway(declared.gateway, upstream.url, key, log))
            if declared.model_map:
                from harness.modelmap import load_model_map
                from harness.spec import load_profile

                profile_models = load_model_map(declared.model_map, load_profile(args.profile))
            silence = declared.keepalive_silence
            nonstream_timeout = declared.nonstream_timeout
            setup_file = declared.implementation
        parts = urlsplit(gateway_url)
        client = stack.enter_context(ProxyServer(f"{parts.scheme}://{parts.netloc}", "client", book))
        target = Target(
            gateway_url=client.url + parts.path,
            gateway_key=key,
            models=profile_models,
            features=features,
            replay_url=replay_url,
            rule_timeout=args.rule_timeout,
            keepalive_silence=silence,
            nonstream_timeout=nonstream_timeout,
            surface=load_profile(args.profile).surface,
            setup=load_feature_setup(setup_file),
        )
        for proxy in (client, upstream):
            if proxy is not None:
                proxy.register(mutants)
        routing = MutantRouting()
        limits = httpx.Limits(
            max_connections=max(8, args.jobs * 2), max_keepalive_connections=max(8, args.jobs * 2)
        )
        http = stack.enter_context(
            httpx.Client(
                trust_env=False,
                follow_redirects=False,
                limits=limits,
                event_hooks={"request": [routing.hook]},
            )
        )
        # The replay upstream served here is called directly; one given by URL, over HTTP.
        replay_client = ReplayClient(replay_url) if args.gateway_url else replay.client()
        stack.callback(replay_client.close)
        yield Rig(target, client, upstream, replay_client, http, routing)


def run_mutant(
    r: Rig, mutant: Mutant, cases: list[Case], broken: frozenset[str], jobs: int, first_kill: bool
) -> MutantResult:
    """One mutant against the whole catalog (the proxies' global mutant; no baseline reuse)."""
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


def skip_reason(r: Rig, mutant: Mutant, base_features: frozenset[str]) -> str | None:
    if mutant.side == "upstream" and r.upstream is None:
        return "upstream-side mutant: no --upstream-proxy-port"
    missing = sorted(set(mutant.features) - base_features)
    if missing:
        # Like a rule, a mutant whose killers need an undeclared feature is not run (e.g. slow: 20 s downloads).
        return f"needs --feature {' '.join(missing)}"
    return None


def _unattributed(replay: ReplayClient) -> bool:
    """Whether the replay upstream saw requests it could not give to a case (since the last clear)."""
    return any(d.get("kind") in ("unmarked", "unknown-marker", "unknown-path") for d in replay.diagnostics())


def run(args: argparse.Namespace) -> int:
    """The kill matrix of `args` (harness/cli/mutants.py parses them)."""
    from harness.errors import RuleCatalogError, SpecError
    from harness.paths import specs_dir
    from harness.spec import load_profile, load_rule_file
    from harness.spec.collection import check_catalog
    from harness.spec.selection import rule_files, rule_selected

    def config_error(message: str) -> int:
        print(f"gateway-conformance mutants: {message}", file=sys.stderr)
        return EXIT_CONFIG

    if args.gateway_url and not args.replay_url:
        return config_error(
            "--gateway-url needs --replay-url (the replay upstream your gateway talks to, or the upstream "
            "proxy's target)"
        )
    reference = reference_of(args)
    if reference is not None:
        from harness.names import unknown_message
        from harness.orchestrate.embedded_catalog import gateways_for

        known = gateways_for(args.profile)
        if reference not in known:
            return config_error(
                unknown_message("--reference-gateway", reference, known, "reference gateway profile")
            )
    try:
        shard = parse_shard(args.shard) if args.shard else None
        catalog = load_catalog()
        if args.merge:
            return merge_main(args, catalog)
        profile = load_profile(args.profile)
        try:
            rules = [
                rule
                for f in rule_files(specs_dir() / args.profile)
                for rule in load_rule_file(f).rules
                if rule_selected(rule, args.rule)
            ]
        except SpecError:
            check_catalog([specs_dir() / args.profile])  # every problem of every file, not the first
            raise
    except (MutantCatalogError, SpecError, ValueError, RuleCatalogError) as exc:
        return config_error(str(exc))
    if not rules:
        return config_error(f"no rule of profile {args.profile} matches {' '.join(args.rule)}")
    mutants = select(catalog.mutants, mutated(args), args.mutant, args.sample, args.seed, args.always)
    if shard is not None:
        mutants = shard_of(mutants, *shard)
    if args.list:
        for m in mutants:
            print(f"{m.id:<40} {m.side:<8} {m.area:<10} {m.models}")
        return EXIT_OK
    if not mutants and shard is None:
        return config_error(f"no mutant of profile {args.profile} matches")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or Path("gc-mutants") / stamp).resolve()
    out.mkdir(parents=True, exist_ok=True)
    models: dict[str, str | None] = {role: spec.default for role, spec in profile.models.items()}
    base = base_features(args)
    cases = cases_of(rules)
    started = time.monotonic()
    results: list[MutantResult] = []
    sequential = args.one_at_a_time or args.first_kill or args.no_baseline
    try:
        with rig(args, models, base, out / "gateway.log", mutants) as r:
            applicable = {rule.id for rule in rules if not_applicable_reason(rule, r.target) is None}
            broken: frozenset[str] = frozenset()
            baseline: list[Outcome] = []
            if not args.no_baseline:
                r.replay.clear_diagnostics()
                baseline = run_catalog(cases, r.target, r.http, r.replay, args.jobs)
                broken = broken_cases(baseline)
                print(
                    f"baseline: {len(baseline)} rule variants in {time.monotonic() - started:.1f}s, "
                    f"{len(broken)} failing without a mutant",
                    flush=True,
                )
            count = iter(range(1, len(mutants) + 1))

            def report(result: MutantResult) -> None:
                reuse = f", {result.reused} reused" if result.reused else ""
                print(
                    f"[{next(count)}/{len(mutants)}] {result.mutant.id}: {result.verdict} "
                    f"({len(result.killers)} rules, {result.cases_run} run{reuse}, {result.seconds:.1f}s)",
                    flush=True,
                )

            by_id: dict[str, MutantResult] = {}
            runnable = []
            for m in mutants:
                why = skip_reason(r, m, base)
                if why is None:
                    runnable.append(m)
                else:
                    by_id[m.id] = MutantResult(m, (), 0, 0.0, skipped=why)
                    report(by_id[m.id])
            if sequential:
                for mutant in runnable:
                    result = run_mutant(r, mutant, cases, broken, args.jobs, args.first_kill)
                    by_id[mutant.id] = result
                    report(result)
            else:
                blind = _unattributed(r.replay)
                if blind:
                    print(
                        "baseline: the replay upstream saw requests without a known case marker; "
                        "upstream-side mutants run on every rule variant",
                        flush=True,
                    )
                for result in run_pairs(
                    r, r.routing, runnable, cases, baseline, broken, args.jobs, report, upstream_blind=blind
                ):
                    by_id[result.mutant.id] = result
            results = [by_id[m.id] for m in mutants]
    except ConfigError as exc:
        print(f"gateway-conformance mutants: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except (RuntimeError, HarnessFailure) as exc:
        print(f"gateway-conformance mutants: harness failure: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    all_of_profile = [m for m in catalog.mutants if mutated(args) in m.profiles]
    complete = (
        not args.first_kill
        and not args.rule
        and shard is None
        and len(results) == len(all_of_profile)
        and not any(r.skipped for r in results)
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
        extra={
            "jobs": args.jobs,
            "first_kill": args.first_kill,
            "sample": args.sample,
            "seed": args.seed,
            "features": sorted(base),
            "rule_globs": list(args.rule),
            "shard": args.shard,
            "one_at_a_time": bool(sequential),
        },
    )
    return write_matrix(out, matrix)


def write_matrix(out: Path, matrix: Matrix) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "kill-matrix.json").write_text(json.dumps(matrix_json(matrix), indent=2) + "\n", encoding="utf-8")
    (out / "kill-matrix.md").write_text(matrix_markdown(matrix), encoding="utf-8")
    print()
    print(matrix_text(matrix))
    if matrix.not_applicable:
        print(f"\nnot applicable in this run (cannot kill): {', '.join(matrix.not_applicable)}")
    print(f"\nwrote {out / 'kill-matrix.json'} and kill-matrix.md")
    if matrix.baseline_broken:
        return EXIT_HARNESS
    return EXIT_SURVIVOR if matrix.survivors else EXIT_OK


def merge_main(args: argparse.Namespace, catalog: MutantCatalog) -> int:
    documents = []
    for name in args.merge:
        path = Path(name)
        path = path / "kill-matrix.json" if path.is_dir() else path
        if not path.is_file():
            raise ValueError(f"--merge {name}: no kill-matrix.json there")
        documents.append(json.loads(path.read_text(encoding="utf-8")))
    matrix = merge_matrices(documents, catalog)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or Path("gc-mutants") / f"merged-{stamp}").resolve()
    print(f"merged {len(documents)} kill matrices ({len(matrix.results)} mutants)")
    return write_matrix(out, matrix)


__all__ = ["case_key", "merge_matrices", "run", "shard_of"]
