"""`gateway-conformance clients`: the client libraries driven through a gateway, a verdict per client.

No --gateway-url: the embedded reference gateway, started in each profile as certify starts it. With
--gateway-url URL --profile P: that gateway, its provider traffic at the replay upstream. Exit codes as
certify: 0 every scenario as expected, 1 failures, 2 the harness failed, 3 bad configuration, 5 a selected client
did not run (not installed: each named with how to install it) or nothing was judged.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import secrets
import shlex
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from harness.clients.drivers import Driver, all_drivers
from harness.clients.judge import NOT_RUN
from harness.clients.runner import ClientTarget, run_profile
from harness.clients.scenarios import ScenarioCatalog, load_scenarios
from harness.clients.table import markdown_table, text_table, verdicts
from harness.errors import ConfigError
from harness.outcomes import EXIT_HARNESS, EXIT_NOTHING_JUDGED, EXIT_OK, KEY_ENV, count_outcomes, exit_code
from harness.spec.model import Profile
from harness.surfaces import surface


def _pick(
    drivers: Sequence[Driver], catalog: ScenarioCatalog, args: argparse.Namespace
) -> tuple[list[Driver], ScenarioCatalog]:
    from harness.names import unknown_message, unmatched

    ids = [d.id for d in drivers]
    for name in unmatched(args.client or [], ids):
        raise ConfigError(unknown_message("--client", name, ids, "client"))
    for name in unmatched(args.scenario or [], [s.id for s in catalog.scenarios]):
        raise ConfigError(unknown_message("--scenario", name, [s.id for s in catalog.scenarios], "scenario"))
    chosen = [d for d in drivers if not args.client or any(fnmatch.fnmatchcase(d.id, g) for g in args.client)]
    scenarios = tuple(
        s
        for s in catalog.scenarios
        if not args.scenario or any(fnmatch.fnmatchcase(s.id, g) for g in args.scenario)
    )
    if not scenarios:
        raise ConfigError(f"--scenario {' '.join(args.scenario)}: no such scenario")
    return chosen, ScenarioCatalog(scenarios=scenarios, profiles=catalog.profiles)


def readiness(driver: Driver) -> str:
    """Whether a client can run here now: `ready to run` only when its libraries are installed (issue 48: an
    isolated environment or the Node clients not made yet were called ready)."""
    from harness.clients.drivers.isolated import IsolatedDriver
    from harness.clients.drivers.node import SOURCE, NodeDriver, cache_dir

    why = driver.missing()
    if why:
        return f"cannot run: {why}"
    if isinstance(driver, IsolatedDriver) and not driver.installed():
        return (
            f"not installed yet: its own environment is made on its first run, in {driver.where} (pip, once)"
        )
    if isinstance(driver, NodeDriver):
        stamp = cache_dir() / "node_modules" / ".gc-lock"
        if not stamp.is_file() or stamp.read_bytes() != (SOURCE / "package-lock.json").read_bytes():
            return f"not installed yet: the Node clients are installed on their first run, into {cache_dir()} (npm ci, once)"
    return "ready to run"


def speaking(drivers: Sequence[Driver], profile: Profile) -> list[Driver]:
    """The clients that speak the profile's surface (harness/surfaces/: each surface names its libraries)."""
    known = surface(profile.surface).clients
    return [d for d in drivers if d.id in known]


def _rerun(args: argparse.Namespace, profile: str) -> str:
    head = ["gateway-conformance", "clients", "--profile", profile]
    if args.gateway_url:
        head += ["--gateway-url", args.gateway_url]
        head += (
            ["--replay-url", args.replay_url] if args.replay_url else ["--replay-port", str(args.replay_port)]
        )
        if args.model_map:
            head += ["--model-map", str(Path(args.model_map).resolve())]
        head += [a for h in args.header for a in ("--header", shlex.quote(h))]
    return " ".join(head)


def _headers(given: Sequence[str], replay_url: str) -> dict[str, str]:
    """--header NAME:VALUE pairs; `${replay_url}` in a value is the replay upstream's address (for a gateway
    told its provider's base URL per request, as Portkey's x-portkey-custom-host)."""
    out = {}
    for item in given:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise ConfigError(f"--header {item!r}: expected NAME:VALUE")
        out[name.strip()] = value.strip().replace("${replay_url}", replay_url)
    return out


def _model(profile: Any, catalog: ScenarioCatalog, model_map: str | None, embedded: bool) -> str | None:
    from harness.modelmap import load_model_map
    from harness.orchestrate.embedded import reference_model_map

    use = catalog.profiles.get(profile.name)
    if use is None:
        raise ConfigError(f"profile {profile.name}: specs/clients/scenarios.yaml names no model role for it")
    if embedded and use.gateway and not model_map:
        # The reference gateway's own map for this catalog (as certify uses it).
        model_map = reference_model_map(use.gateway, profile.name)
    return load_model_map(model_map, profile).get(use.role)


def run(args: argparse.Namespace) -> int:
    from harness.clients import orchestration as orchestrate
    from harness.paths import specs_root
    from harness.spec import load_profile
    from harness.spec.loader import available_profiles

    catalog = load_scenarios()
    drivers, catalog = _pick(all_drivers(), catalog, args)
    if args.list:
        for d in drivers:
            print(f"client {d.id} ({d.language}): {readiness(d)}")
        for s in catalog.scenarios:
            print(f"scenario {s.id}: {s.title}")
        return 0
    known = [p for p in available_profiles(specs_root()) if p in catalog.profiles]
    profiles = args.profile or known
    unknown = [p for p in profiles if p not in known]
    if unknown:
        raise ConfigError(f"unknown profile(s) {', '.join(unknown)} (known: {', '.join(known)})")
    if args.gateway_url and len(profiles) != 1:
        raise ConfigError("--gateway-url needs exactly one --profile NAME")
    if not args.gateway_url and args.model_map:
        raise ConfigError("--model-map needs --gateway-url (the reference gateway uses the defaults)")
    if args.mutants and (args.gateway_url or len(profiles) != 1):
        raise ConfigError("--mutants runs the embedded reference gateway in exactly one --profile")
    if args.expectations and len(profiles) != 1:
        raise ConfigError("--expectations needs exactly one --profile (an expectations file is per profile)")
    _headers(args.header, "")  # a malformed --header is a configuration error before anything starts
    if args.model_map and not Path(args.model_map).is_file():
        raise ConfigError(f"--model-map {args.model_map}: no such file")
    expectations = None
    if args.expectations:
        from harness.expectations import load_expectations

        if not Path(args.expectations).is_file():
            raise ConfigError(f"--expectations {args.expectations}: no such file")
        expectations = load_expectations(Path(args.expectations), profiles[0])
    loaded = {p: load_profile(p, specs_root()) for p in profiles}
    models = {p: _model(loaded[p], catalog, args.model_map, not args.gateway_url) for p in profiles}
    from harness.report.folder import fresh_report_dir

    documents: list[dict[str, Any]] = []
    latest: list[dict[str, Any]] = []  # --latest: the same targets, each client on its newest release
    if args.mutants:
        p = loaded[profiles[0]]
        with fresh_report_dir(args.report_dir, "gc-clients") as report_dir:
            return _bugs(args, p, models[p.name], speaking(drivers, p), catalog, report_dir)
    with fresh_report_dir(args.report_dir, "gc-clients") as report_dir:  # one run's report, never two
        if args.gateway_url:
            key = args.gateway_key or os.environ.get(KEY_ENV) or ""
            replay = orchestrate.replay_for_target("replay", args.replay_port, args.replay_url)
            with replay as replay_url:
                assert replay_url is not None
                p = loaded[profiles[0]]
                target = ClientTarget(p.name, p.doc, p.title, args.gateway_url, key, replay_url, models[p.name],
                                args.gateway_url, _rerun(args, p.name), _headers(args.header, replay_url))  # fmt: skip
                target = _probed(target, p, catalog)
                documents.append(run_profile(target, speaking(drivers, p), catalog))
                latest += _latest(args, target, speaking(drivers, p), catalog)
        else:
            key = "gc-" + secrets.token_hex(16)
            with orchestrate.replay_upstream() as replay_url:
                for name in profiles:
                    p = loaded[name]
                    log = report_dir / name / "gateway.log"
                    gateway = catalog.profiles[name].gateway or name
                    with orchestrate.reference_gateway(gateway, replay_url, key, log) as url:
                        target = ClientTarget(p.name, p.doc, p.title, url, key, replay_url, models[name],
                                        "reference gateway (embedded)", _rerun(args, name))  # fmt: skip
                        target = _probed(target, p, catalog)
                        documents.append(run_profile(target, speaking(drivers, p), catalog))
                        latest += _latest(args, target, speaking(drivers, p), catalog)
    if expectations is not None:
        documents = [_expected(d, expectations) for d in documents]
    _write(report_dir, documents)
    for doc in documents:
        print()
        print(text_table(doc))
    print()
    for client, verdict in verdicts(documents).items():
        print(f"  {client:<18} {verdict}")
    if args.latest:
        from harness.clients.latest import upgrades, upgrades_markdown, upgrades_text

        _write(report_dir / "latest", latest)
        rows = upgrades(documents, latest)
        (report_dir / "upgrades.md").write_text(upgrades_markdown(rows), encoding="utf-8")
        (report_dir / "upgrades.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        print(
            "\nthe newest releases beside the pinned ones (verdict pinned → newest; versions pinned → newest):"
        )
        print("\n".join(upgrades_text(rows)))
    print(f"\nreport: {report_dir}")
    code = exit_code([*documents, *latest])
    # A client asked for (by --client, or every one by default) that could not run judged nothing: the run
    # judged less than it was asked to, so it is not "as expected" (exit 5), whatever the others did.
    judged = verdicts(documents)
    absent = [(d.id, why) for d in drivers if judged.get(d.id) == NOT_RUN and (why := d.missing())]
    for client, why in absent:
        print(f"  NOT RUN {client}: {why}")
    if absent and code == EXIT_OK:
        code = EXIT_NOTHING_JUDGED
        print(f"verdict: {len(absent)} client(s) did not run ({', '.join(c for c, _ in absent)}): install them as "
              "said above, or leave them out with --client: not a pass")  # fmt: skip
        return code
    print({0: "verdict: every client scenario as expected", 1: "verdict: client scenarios failed",
           2: "verdict: the harness itself failed (HARNESS_ERROR); see the report",
           5: "verdict: no client scenario was judged (every one NOT RUN or not applicable): not a pass"}[code])  # fmt: skip
    return code


def _latest(
    args: argparse.Namespace, target: ClientTarget, drivers: Sequence[Driver], catalog: ScenarioCatalog
) -> list[dict[str, Any]]:
    """With --latest: the same target, each client on the newest release of its libraries (harness/clients/latest.py)."""
    if not args.latest:
        return []
    from harness.clients.latest import latest_drivers, node_latest

    with node_latest(drivers):
        return [run_profile(target, latest_drivers(drivers), catalog)]


def _probed(target: ClientTarget, profile: Profile, catalog: ScenarioCatalog) -> ClientTarget:
    """`target` with the provider family its gateway calls for the clients' model, said up front with the
    scenarios that family leaves unjudged (harness/clients/families.py)."""
    import dataclasses

    from harness.clients.families import probe_family, scripted

    if target.model is None:
        return target
    family = probe_family(
        target.gateway_url,
        target.key,
        target.model,
        target.replay_url,
        surface(profile.surface),
        target.headers,
    )
    if family is None:
        return target
    blind = [s.id for s in catalog.scenarios if family not in scripted(s)]
    if blind:
        print(
            f"clients: {target.description} calls the {family} provider family for {target.model}; the client "
            f"scenarios script no {family} answer for {len(blind)} of {len(catalog.scenarios)} ({', '.join(blind)}): "
            "those are NOT_APPLICABLE here, judged for no library",
            flush=True,
        )
    return dataclasses.replace(target, family=family)


def _bugs(
    args: argparse.Namespace,
    p: Any,
    model: str | None,
    drivers: Sequence[Driver],
    catalog: ScenarioCatalog,
    report_dir: Path,
) -> int:
    from harness.clients import orchestration as orchestrate
    from harness.clients.bugs import bugs_markdown, catch_bugs, mutable_gateway

    key = "gc-" + secrets.token_hex(16)
    with orchestrate.replay_upstream() as replay_url:
        log = report_dir / p.name / "gateway.log"
        with mutable_gateway(catalog.profiles[p.name].gateway or p.name, replay_url, key, log) as (url, use):
            target = ClientTarget(p.name, p.doc, p.title, url, key, replay_url, model, "reference gateway + one mutant",
                            _rerun(args, p.name))  # fmt: skip
            found, baseline = catch_bugs(target, use, drivers, catalog, args.mutants)
    text = bugs_markdown(found, baseline, p.name)
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "bugs.md").write_text(text, encoding="utf-8")
    print("\n" + text + f"\nreport: {report_dir / 'bugs.md'}")
    return EXIT_HARNESS if baseline else 0


def _expected(document: dict[str, Any], expectations: Any) -> dict[str, Any]:
    from harness.expectations import apply

    results = []
    for r in document["results"]:
        found = expectations.find(r["rule_id"], r["variant"])
        results.append(
            {**r, "outcome": apply(r["outcome"], found), "expectation": found.as_json() if found else None}
        )
    problems = expectations.stale([r["rule_id"] for r in results], date.today())
    return {**document, "results": results, "totals": count_outcomes(results),
            **({"expectation_problems": problems} if problems else {})}  # fmt: skip


def _write(report_dir: Path, documents: Sequence[dict[str, Any]]) -> None:
    from harness.clients.junit import junit_xml
    from harness.report import write_reports

    for doc in documents:
        out = report_dir / doc["profile"]["name"]
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(
            json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        (out / "junit.xml").write_text(junit_xml(doc), encoding="utf-8")
    write_reports(report_dir, documents)
    summary = report_dir / "summary.md"
    tables = ["# Will my application work through it?", ""]
    tables += [f"- **{c}**: {v}" for c, v in verdicts(documents).items()]
    for doc in documents:
        tables += ["", *markdown_table(doc)]
    summary.write_text("\n".join(tables) + "\n\n" + summary.read_text(encoding="utf-8"), encoding="utf-8")
