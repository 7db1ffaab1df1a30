"""`certify`: check the configuration, run each profile's catalog (the user's gateway, or the embedded
reference gateway), write the reports and say the verdict. cli.py parses the arguments; this runs them."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import secrets
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, HarnessFailure, Interrupted
from harness.orchestrate import child
from harness.orchestrate.child import OUTPUT_FILE, Run, replay_for_target, rerun_line, run_pytest
from harness.orchestrate.config import RunConfig
from harness.orchestrate.embedded import GatewayProcess, embedded, mapped_models
from harness.orchestrate.progress import Progress, without_progress_rows
from harness.outcomes import KEY_ENV, exit_code

VERDICT_LINE = {
    0: "verdict: all rules as expected",
    1: "verdict: unexpected failures",
    2: "verdict: the harness itself failed (HARNESS_ERROR); see the report",
    5: "verdict: nothing judged (no selected rule variant ran, or fewer than a null model role left out): not a pass",
}


def certify(args: argparse.Namespace) -> int:
    """The whole command: exit 0/1/2 by the verdict; ConfigError (exit 3) before anything runs."""
    from harness.conformance.publish import prepare
    from harness.paths import specs_root
    from harness.report import write_reports
    from harness.report.text import summarize
    from harness.spec.loader import available_profiles

    config = RunConfig.from_options(args)
    config.check()  # what the plugin refuses too, before any server starts
    publication = prepare(args)  # the conformance report's inputs, checked before anything runs
    root = specs_root(args.specs_dir)
    known = available_profiles(root)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    report_dir = Path(args.report_dir or Path("gc-report") / stamp).resolve()
    extra = config.forwarded_args() + (["-n", str(args.workers)] if args.workers else [])
    if args.expectations and not Path(args.expectations).is_file():
        raise ConfigError(f"--expectations {args.expectations}: no such file")
    clients: list[dict[str, Any]] = []
    try:
        if args.gateway_url:
            documents = [_certify_gateway(args, root, known, report_dir, extra)]
        else:
            documents = _certify_reference(args, known, report_dir, extra)
        if args.clients:  # the client libraries through the same gateway (harness/certify/clients.py)
            from harness.certify.clients import run_clients

            certified = [d["profile"]["name"] for d in documents]
            clients = run_clients(args, report_dir, list(dict.fromkeys(certified)))
    except Interrupted as exc:  # SIGINT or SIGTERM: what was judged so far is the report, marked so
        interrupted_report(report_dir, exc)
        raise
    write_reports(report_dir, [*documents, *clients])
    if clients:
        from harness.certify.clients import add_client_grid

        add_client_grid(report_dir / "summary.md", clients)
    publication.write(report_dir, documents)
    print()
    print(summarize(documents))
    if clients:
        from harness.clients.table import text_table

        for document in clients:
            print()
            print(text_table(document))
    print(f"\nreport: {report_dir}")
    code = exit_code([*documents, *clients])
    print(verdict_line(code, documents))
    return code


def interrupted_report(report_dir: Path, exc: Interrupted) -> None:
    """The results the catalog runs wrote before they stopped, each marked `interrupted`, and the reports people
    read made from them (verdict INTERRUPTED, never a pass); no conformance report (nothing to publish). `exc` is
    told where they are and how many variants they judged."""
    from harness.orchestrate.processes import signal_name
    from harness.report import write_reports

    documents = []
    for path in sorted(report_dir.glob("*/results.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a run killed while it wrote: nothing of it to keep
        document["interrupted"] = signal_name(exc.signum)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        documents.append(document)
    exc.judged = sum(len(d.get("results") or []) for d in documents)
    if documents:
        write_reports(report_dir, documents)
        exc.where = str(report_dir)


def verdict_line(code: int, documents: Sequence[dict[str, Any]]) -> str:
    """The last line: live results say they are not a verdict of record; a budget cut never says 'all rules
    as expected' (harness/engine/costguard.py)."""
    from harness.engine.costguard import partial_line
    from harness.report.live import VERDICT_NOTE, is_live

    if not any(is_live(d) for d in documents):
        return VERDICT_LINE[code]
    partial = partial_line(documents)
    what = partial if partial and code == 0 else VERDICT_LINE[code].removeprefix("verdict: ")
    return f"verdict ({VERDICT_NOTE}): {what}"


def _certify_gateway(
    args: argparse.Namespace, root: Path, known: Sequence[str], report_dir: Path, extra: list[str]
) -> dict[str, Any]:
    """The user's gateway: exactly one profile, the replay upstream served here or given (or live)."""
    if not args.profile or len(args.profile) != 1:
        raise ConfigError("--gateway-url needs exactly one --profile NAME")
    if args.profile[0] not in known:
        raise ConfigError(f"unknown profile {args.profile[0]!r} (known: {', '.join(known)})")
    if args.model_map and not Path(args.model_map).is_file():
        raise ConfigError(f"--model-map {args.model_map}: no such file")
    child.check_profile_config(
        args.profile[0], root=root, model_map=args.model_map, expectations=args.expectations
    )
    from harness.modelmap import left_out, left_out_line
    from harness.spec import load_profile

    missing = left_out(args.model_map, load_profile(args.profile[0], root))
    if missing:  # said, never taken silently (the conformance report names every role's id too)
        print(left_out_line(args.model_map, missing), flush=True)
    child.selected_profiles(args.profile, args.rule, root)
    run = Run(
        profile=args.profile[0],
        gateway_url=args.gateway_url,
        description=args.gateway_url,
        replay_url=args.replay_url,
        features=tuple(args.feature),
        model_map=str(Path(args.model_map).resolve()) if args.model_map else None,
        upstream=args.upstream,
    )
    key = args.gateway_key or os.environ.get(KEY_ENV)
    with child.fresh_output(report_dir):
        return certify_target(run, key=key, replay_port=args.replay_port, report_dir=report_dir, extra=extra)


def _certify_reference(
    args: argparse.Namespace, known: Sequence[str], report_dir: Path, extra: list[str]
) -> list[dict[str, Any]]:
    """The embedded reference gateway, in each selected profile (default: every profile with rules)."""
    if args.specs_dir:
        raise ConfigError(
            "--specs-dir needs --gateway-url: the embedded reference gateway implements only the bundled profiles"
        )
    if args.model_map:
        raise ConfigError("--model-map needs --gateway-url (the reference gateway uses the defaults)")
    profiles = args.profile or child.profiles_with_rules()
    unknown = [p for p in profiles if p not in known]
    if unknown:
        raise ConfigError(f"unknown profile(s) {', '.join(unknown)} (known: {', '.join(known)})")
    if not profiles:
        raise HarnessFailure("no profile has rules to run")
    for profile in profiles:
        child.check_profile_config(profile, expectations=args.expectations)
    selected = child.selected_profiles(profiles, args.rule)
    for profile in profiles:
        if profile not in selected:
            print(f"profile {profile}: no rule matches --rule {' '.join(args.rule)}; not run")
    with child.fresh_output(report_dir):
        return certify_embedded(
            selected,
            features=args.feature,
            report_dir=report_dir,
            extra=extra,
            fuzz_examples=0 if args.rule else max(args.fuzz_examples, 0),
        )


def target_rerun(run: Run, replay_port: int | None, extra: Sequence[str], key: bool) -> str:
    head = ["gateway-conformance", "certify", "--gateway-url", run.gateway_url, "--profile", run.profile]
    if run.upstream == "live":
        head += ["--upstream", "live"]
    elif run.replay_url:
        head += ["--replay-url", run.replay_url]
    elif replay_port is not None:
        head += ["--replay-port", str(replay_port)]
    if run.model_map:
        head += ["--model-map", run.model_map]
    for feature in run.features:
        head += ["--feature", feature]
    return rerun_line(head, extra, key)


def certify_target(
    run: Run, *, key: str | None, replay_port: int | None, report_dir: Path, extra: Sequence[str]
) -> dict[str, Any]:
    """Certify the user's gateway: one profile, the replay upstream served or given (or live)."""
    from harness.modelmap import load_model_map
    from harness.orchestrate.preflight import check_model, check_replay, check_wiring, preflight
    from harness.paths import specs_root
    from harness.spec import load_profile
    from harness.surfaces import surface

    profile = load_profile(run.profile, specs_root(_specs_dir_of(extra)))
    rerun = run.rerun_base or target_rerun(run, replay_port, extra, bool(key))
    if run.replay_url:
        check_replay(run.replay_url)  # a dead --replay-url is one line, exit 3
    with replay_for_target(run.upstream, replay_port, run.replay_url) as replay_url:
        # Before any rule: a gateway no rule could judge is a one-line configuration error (exit 3), one that does
        # not answer its API at all an outage (exit 2); no report either way.
        inbound = surface(profile.surface)
        roles = load_model_map(run.model_map, profile)
        role = "MODEL" if "MODEL" in roles else next(iter(roles), None)
        model = roles.get(role) if role else None
        preflight(run.gateway_url, key, profile.base_path, surface=inbound, model=model)
        if replay_url:
            # Its provider traffic reaches this replay upstream (a gateway wired to another would fail every rule).
            check_wiring(run.gateway_url, key, replay_url, model, inbound)
        elif (
            role and model
        ):  # live: the model the rules name is one the gateway serves, before any budget is spent
            check_model(run.gateway_url, key, model, role, run.profile, inbound)
        run = Run(**{**run.__dict__, "replay_url": replay_url, "rerun_base": rerun})
        print(
            f"certifying {run.gateway_url} against profile {run.profile} (upstream: {run.upstream}"
            f"{'' if not replay_url else ' at ' + replay_url})",
            flush=True,
        )
        # Its output to its folder and a progress line here, printed once it ends: an interrupt then says one line.
        out_dir = report_dir / run.profile
        output = out_dir / OUTPUT_FILE
        with Progress([(run.profile, output)]) as progress:
            document = run_pytest(run, out_dir, key, extra, capture=True, fork=False)
            progress.done(run.profile)
        sys.stdout.write(without_progress_rows(output.read_text(encoding="utf-8", errors="replace")))
        sys.stdout.flush()
        return document


def _specs_dir_of(extra: Sequence[str]) -> str | None:
    args = list(extra)
    return args[args.index("--specs-dir") + 1] if "--specs-dir" in args[:-1] else None


def certify_embedded(
    profiles: Sequence[str],
    *,
    features: Sequence[str],
    report_dir: Path,
    extra: Sequence[str],
    fuzz_examples: int = 0,
) -> list[dict[str, Any]]:
    """Certify the embedded reference gateway: every catalog at once, each in its own child pytest, over one
    replay upstream and one gateway process per reference gateway profile (started together, shared by the
    catalogs it serves: profile openai's run on each). With `fuzz_examples`, each profile's gateway is then
    fuzzed (its `robustness` area), one after the other, once every catalog is done: the fuzz judges what the
    replay upstream's tap saw, which must be its own requests only."""
    from collections import Counter
    from concurrent.futures import ThreadPoolExecutor, wait

    from harness.fuzz.tap import tapped_replay
    from harness.orchestrate import processes

    key = "gc-" + secrets.token_hex(16)
    pairs = embedded_runs(profiles)
    with tapped_replay() as (replay_url, tap), contextlib.ExitStack() as stack:
        child.start_fork_server()  # warm while the gateways start
        stack.callback(child.stop_fork_server)
        tap.enabled = False  # the catalogs' bodies need not be kept; only fuzz reads them
        gateways = {}
        for gateway in dict.fromkeys(g for _, g in pairs):
            process = GatewayProcess(gateway, replay_url, key, report_dir / gateway / "gateway.log").start()
            stack.callback(process.stop)
            gateways[gateway] = process
        urls = {gateway: process.wait_healthy() for gateway, process in gateways.items()}
        runs = [_embedded_run(p, g, urls[g], replay_url, features, extra) for p, g in pairs]
        print(
            f"certifying the embedded reference gateway ({', '.join(gateways)}): {len(runs)} catalog runs at "
            f"once, replay upstream at {replay_url}",
            flush=True,
        )
        outputs = [(_run_label(p, g), report_dir / sub / OUTPUT_FILE) for (p, g), (_run, sub, _a) in zip(pairs, runs, strict=True)]  # fmt: skip
        with ThreadPoolExecutor(max_workers=len(runs) or 1) as pool, Progress(outputs) as progress:
            futures = [
                pool.submit(run_pytest, run, report_dir / sub, key, args, capture=True)
                for run, sub, args in runs
            ]
            for (label, _output), future in zip(outputs, futures, strict=True):
                future.add_done_callback(functools.partial(_finished, progress, label))
            try:
                documents = [
                    future.result() for future in futures
                ]  # a failed run raises here, the others finish
            except KeyboardInterrupt:  # SIGINT or SIGTERM: each catalog run writes what it judged, then ends
                processes.stop_children()
                wait(futures)
                raise
        # Each run's failures and summary, in catalog order; its rows of progress characters are in its folder only.
        for run, sub, _args in runs:
            print(f"\n{_run_title(run)}", flush=True)
            output = (report_dir / sub / OUTPUT_FILE).read_text(encoding="utf-8", errors="replace")
            sys.stdout.write(without_progress_rows(output))
            sys.stdout.flush()
        if fuzz_examples:
            # Every endpoint of every profile (issue 47): each gateway's chat endpoint under its own profile, its
            # /v1/messages and /v1/responses under theirs (profile openai's runs are the chat endpoints again);
            # a gateway's examples are split between its endpoints.
            fuzzed = [i for i, (profile, _gateway) in enumerate(pairs) if profile != "openai"]
            per_gateway = Counter(pairs[i][1] for i in fuzzed)
            for i in fuzzed:
                run, _sub, _args = runs[i]
                examples = max(1, -(-fuzz_examples // per_gateway[pairs[i][1]]))
                models = mapped_models(*pairs[i])
                documents[i] = with_robustness(
                    documents[i], run, key, tap, examples, report_dir / runs[i][1], models
                )
    return documents


def _finished(progress: Progress, label: str, _future: object) -> None:
    progress.done(label)


def _run_label(profile: str, gateway: str) -> str:
    return profile if gateway == profile else f"{profile}@{gateway}"


def _embedded_run(
    profile: str, gateway: str, url: str, replay_url: str, features: Sequence[str], extra: Sequence[str]
) -> tuple[Run, str, list[str]]:
    """The catalog `profile` on the reference gateway in profile `gateway`: the run, its report folder (one
    per gateway profile for a catalog served under another's: openai-ezat, …) and its child's arguments."""
    declared = embedded(profile, gateway)
    run = Run(
        profile=profile,
        gateway_url=url,
        description="reference gateway (embedded)" + ("" if gateway == profile else f", profile {gateway}"),
        replay_url=replay_url,
        features=(*declared.features, *features),
        model_map=declared.model_map,
        # The reference gateway and replay upstream stop with this run: rerun through certify.
        rerun_base=rerun_line(
            ["gateway-conformance", "certify", "--profile", profile]
            + [a for f in features for a in ("--feature", f)],
            extra,
        ),
    )
    sub = profile if gateway == profile else f"{profile}-{gateway}"
    return run, sub, [*declared.plugin_args(), *extra]


def _run_title(run: Run) -> str:
    gateway = run.description.partition(", profile ")[2]
    return (
        f"certified the embedded reference gateway{f' ({gateway})' if gateway else ''} against profile "
        f"{run.profile} (replay upstream at {run.replay_url})"
    )


def embedded_runs(profiles: Sequence[str]) -> list[tuple[str, str]]:
    """(catalog, reference gateway profile) pairs: each catalog on its own gateway profile, or on each of the
    gateway profiles that serve it (harness.orchestrate.embedded_catalog)."""
    from harness.orchestrate.embedded_catalog import gateways_for

    return [(profile, gateway) for profile in profiles for gateway in gateways_for(profile)]


def with_robustness(
    document: dict[str, Any],
    run: Run,
    key: str,
    tap: Any,
    examples: int,
    out_dir: Path,
    models: Sequence[str] = (),
) -> dict[str, Any]:
    """`document` with a bounded fuzz of the same gateway added as its `robustness` area (fixed seed)."""
    from harness.fuzz.document import results_document
    from harness.fuzz.run import fuzz_profile
    from harness.outcomes import count_outcomes

    tap.take()
    tap.enabled = True
    try:
        fuzzed = fuzz_profile(
            run.profile, run.gateway_url, key, tap, examples=examples, seconds=60.0, seed=1, timeout=30.0,
            spill_dir=out_dir, models=models,
        )  # fmt: skip
    finally:
        tap.enabled = False
        tap.take()
    robustness = results_document(
        fuzzed, examples=examples, seed=1, replay_url=run.replay_url, description=run.description
    )
    counts = (
        ", ".join(f"{n} {outcome}" for outcome, n in robustness["totals"].items() if n) or "nothing judged"
    )
    gateway = run.description.partition(", profile ")[2]
    print(
        f"fuzzed {run.profile}{f' on {gateway}' if gateway else ''}: {examples} hostile requests, {counts}",
        flush=True,
    )
    results = [*document["results"], *robustness["results"]]
    merged = {**document, "results": results, "totals": count_outcomes(results)}
    (out_dir / "results.json").write_text(
        json.dumps(merged, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return merged
