"""Run the client scenarios against one gateway in one profile: register each scenario's provider script
with the replay upstream under its own case marker, let every client's driver run them, read what reached
the provider, judge, and write the results in the project's results format (ids clients/<client>/<scenario>)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.clients.drivers.base import Driver
from harness.clients.judge import judge
from harness.clients.observation import Job, Observation
from harness.clients.scenarios import Scenario, ScenarioCatalog
from harness.errors import HarnessFailure
from harness.families import endpoint_family

WRONG_KEY = "gc-wrong-key-for-the-auth-scenario"
SCENARIOS_SOURCE = "specs/clients/scenarios.yaml"


@dataclass(frozen=True)
class ClientTarget:
    profile: str
    doc: str
    title: str
    gateway_url: str
    key: str
    replay_url: str
    model: str | None  # the profile's client model role, mapped (None: mapped to nothing)
    description: str
    rerun: str  # a command that reruns the clients against this gateway
    headers: Mapping[str, str] = field(
        default_factory=dict
    )  # --header: sent by every client on every request
    # The provider family the gateway calls for `model`, probed up front (families.py).
    family: str | None = None


def _result(
    target: ClientTarget, client: str, scenario: Scenario, outcome: str, *, reason: str | None = None,
    violations: Sequence[Mapping[str, Any]] = (), duration: float = 0.0, exchange: Any = None,
    quote: str | None = None, section: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    return {
        "rule_id": f"clients/{client}/{scenario.id}",
        "variant": {},
        "profile": target.profile,
        "area": f"clients/{client}",
        "level": "MUST",
        "title": f"{client}: {scenario.title}",
        "source": {
            "doc": target.doc if quote else SCENARIOS_SOURCE,
            "section": section or scenario.id,
            "quote": quote or scenario.title,
        },
        "reading": None,
        "outcome": outcome,
        "reason": reason,
        "violations": list(violations),
        "duration": round(duration, 4),
        "rerun": f"{target.rerun} --client {client} --scenario {scenario.id}",
        "exchange": exchange,
    }


def _bodies(calls: Sequence[Any]) -> list[Any]:
    return [c.json for c in calls]


def _exchange(job: Job, seen: Observation, calls: Sequence[Any]) -> dict[str, Any]:
    """The evidence a failure carries: what the library was asked and gave, and each provider request."""
    return {
        "client": {"scenario": job.scenario.id, "model": job.model, "base_url": job.base_url},
        "library": seen.as_json(),
        "upstream": [
            {
                "path": c.path,
                "body": c.body.decode("utf-8", errors="replace")[:4000],
                "served_status": c.served.status if c.served else None,
            }
            for c in calls
        ],
    }


def run_client(
    target: ClientTarget, driver: Driver, scenarios: Sequence[Scenario], replay: Any
) -> list[dict[str, Any]]:
    """One client's results in this profile, one per scenario."""
    results: dict[str, dict[str, Any]] = {}
    from harness.clients.families import scripted

    why_not = driver.missing()
    runnable: list[Scenario] = []
    for s in scenarios:
        na = s.not_applicable.get(target.profile)
        if target.family is not None and target.family not in scripted(s):
            results[s.id] = _result(
                target, driver.id, s, "NOT_APPLICABLE", reason=unscripted(target.family, s)
            )
        elif na is not None:
            results[s.id] = _result(target, driver.id, s, "NOT_APPLICABLE", reason=f"the doc says: {na.quote}",
                                    quote=na.quote, section=na.section)  # fmt: skip
        elif target.model is None:
            results[s.id] = _result(
                target, driver.id, s, "NOT_APPLICABLE", reason="the clients' model role is mapped to nothing"
            )
        elif why_not:
            results[s.id] = _result(target, driver.id, s, "SKIP", reason=why_not)
        elif (cannot := getattr(driver, "cannot", lambda _s: None)(s.id)) is not None:
            results[s.id] = _result(target, driver.id, s, "NOT_APPLICABLE", reason=f"{driver.id}: {cannot}")
        else:
            runnable.append(s)
    jobs, markers = [], []
    for s in runnable:
        marker = f"[gc:clients/{driver.id}/{s.id}#{secrets.token_hex(6)}]"
        replay.register(marker, f"clients/{driver.id}/{s.id}", dict(s.upstream))
        markers.append(marker)
        jobs.append(
            Job(
                scenario=s,
                base_url=target.gateway_url,
                key=WRONG_KEY if s.wrong_key else target.key,
                model=target.model or "",
                prompt=f"{marker} {s.prompt}",
                headers=target.headers,
            )
        )
    started = time.monotonic()
    try:
        observations = driver.run_all(jobs) if jobs else []
    except HarnessFailure as exc:
        for s in runnable:
            results[s.id] = _result(target, driver.id, s, "HARNESS_ERROR", reason=str(exc))
        observations = []
    per_job = (time.monotonic() - started) / max(len(jobs), 1)
    for job, marker, seen in zip(jobs, markers, observations, strict=True):
        calls = replay.calls(marker)
        replay.forget(marker)
        called = {f for f in (endpoint_family(c.path) for c in calls) if f}
        if called - scripted(job.scenario):  # the probe did not tell, the calls do: the harness's limit
            other = sorted(called - scripted(job.scenario))[0]
            results[job.scenario.id] = _result(
                target, driver.id, job.scenario, "NOT_APPLICABLE", reason=unscripted(other, job.scenario)
            )
            continue
        served = [c.served.status if c.served else None for c in calls]
        family = sorted(called)[0] if called else target.family
        violations = [v.as_json() for v in judge(job.scenario, seen, _bodies(calls), served, family)]
        results[job.scenario.id] = _result(
            target, driver.id, job.scenario, "FAIL" if violations else "PASS",
            violations=violations, duration=per_job,
            exchange=_exchange(job, seen, calls) if violations else None,
        )  # fmt: skip
    return [results[s.id] for s in scenarios]


def unscripted(family: str, scenario: Scenario) -> str:
    from harness.clients.families import scripted

    return (
        f"the gateway calls the {family} provider family for the clients' model, and this scenario scripts "
        f"{', '.join(sorted(scripted(scenario))) or 'no'} answers only: the harness cannot judge it there "
        "(not the library's fault)"
    )


def run_profile(target: ClientTarget, drivers: Sequence[Driver], catalog: ScenarioCatalog) -> dict[str, Any]:
    """The results document of every client in this profile (before expectations are applied)."""
    from harness import __version__
    from harness.outcomes import count_outcomes
    from harness.replay.client import ReplayClient

    started = time.time()
    results: list[dict[str, Any]] = []
    clients: dict[str, Any] = {}
    with ReplayClient(target.replay_url) as replay:
        for driver in drivers:
            print(f"clients: {driver.id} through {target.description} ({target.profile})", flush=True)
            results += run_client(target, driver, catalog.scenarios, replay)
            clients[driver.id] = {"language": driver.language, "versions": driver.versions()}
    finished = time.time()
    return {
        "suite": {"name": "gateway-conformance", "version": __version__},
        "profile": {"name": target.profile, "doc": target.doc, "title": target.title},
        "target": {
            "gateway_url": target.gateway_url,
            "upstream": "replay",
            "replay_url": target.replay_url,
            "models": {"clients": target.model},
            "description": target.description,
        },
        "timings": {"started": started, "finished": finished, "duration": round(finished - started, 3)},
        "totals": count_outcomes(results),
        "results": results,
        "clients": clients,
    }
