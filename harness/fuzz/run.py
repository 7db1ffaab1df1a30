"""One profile fuzzed: the seeded cases sent one by one over one keep-alive connection, each judged by the
invariants, the first failure shrunk, the gateway's health checked afterwards, the figures counted."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import FuzzConfigError
from harness.fuzz.tap import UpstreamTap
from harness.outcomes import KEY_ENV
from harness.surfaces.base import Surface


@dataclass
class Figures:
    examples: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    server_errors: int = 0
    non_envelope: int = 0
    invalid_upstream_json: int = 0
    refused_reaching_upstream: int = 0
    hangs: int = 0
    upstream_requests: int = 0
    seconds: float = 0.0

    def count(self, exchange: Any, violations: Sequence[Any]) -> None:
        self.examples += 1
        self.by_kind[exchange.case.kind] = self.by_kind.get(exchange.case.kind, 0) + 1
        status = str(exchange.answer.status)
        self.statuses[status] = self.statuses.get(status, 0) + 1
        self.upstream_requests += len(exchange.upstream_bodies or ())
        ids = [v.rule_id for v in violations]
        self.server_errors += "robustness/no-5xx-for-client-errors" in ids
        self.non_envelope += "robustness/error-envelope" in ids
        self.invalid_upstream_json += "robustness/upstream-json-valid" in ids
        self.refused_reaching_upstream += "robustness/refused-before-upstream" in ids
        self.hangs += "robustness/no-hang" in ids

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "fuzz-figures", **self.__dict__, "seconds": round(self.seconds, 2)}


@dataclass
class Failure:
    exchange: Any
    violations: list[Any]
    curl: str
    found: str = ""  # which example of which seed, and whether hypothesis shrank it


@dataclass
class ProfileRun:
    profile: str
    gateway_url: str
    figures: Figures
    failure: Failure | None
    healthy: str | None  # None: healthy; else what went wrong
    started: float
    finished: float
    observed_upstream: bool


def _models(profile: str) -> list[str]:
    import yaml

    from harness.paths import specs_dir

    path = specs_dir() / profile / "profile.yaml"
    if not path.is_file():
        return []
    models = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models") or {}
    return sorted({str(m["default"]) for m in models.values() if isinstance(m, dict) and m.get("default")})


def _generator(profile: str, models: Sequence[str]) -> Any:
    from harness.fuzz.invariants import style_for
    from harness.fuzz.strategies import generator

    return generator(
        profile,
        models,
        other_types_refused=style_for(profile).other_content_types_refused,
        bodies=_bodies(profile),
    )


def generate_cases(profile: str, models: Sequence[str], *, seed: int, examples: int) -> Iterator[Any]:
    """The cases a run with `seed` sends, in order (nothing sent): example i is built from its own seeded
    source, so it does not depend on what the gateway answered before."""
    from harness.fuzz.strategies import example_source

    gen = _generator(profile, list(models) or _models(profile))
    for index in range(examples):
        yield gen.case(example_source(seed, index))


def _send(client: Any, url: str, key: str | None, case: Any, timeout: float) -> Any:
    """One case over `client` (a `harness.fuzz.wire.Connection`), answered or not."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    if case.content_type is not None:
        headers["content-type"] = case.content_type
    return client.post(url, case.body, headers, timeout)


def curl_repro(url: str, case: Any, spill: Path | None = None) -> str:
    """One shell line that sends `case` again (the body inline as printf escapes, or from a file if long)."""
    import shlex

    # Double quotes: the shell fills in the key (in single quotes curl would send the text `$GC_GATEWAY_KEY`).
    headers = f'-H "authorization: Bearer ${KEY_ENV}"'
    if case.content_type is not None:
        headers += f" -H {shlex.quote('content-type: ' + case.content_type)}"
    else:
        headers += " -H 'content-type:'"  # curl would add application/x-www-form-urlencoded
    if len(case.body) > 1500 and spill is not None:
        spill.parent.mkdir(parents=True, exist_ok=True)
        spill.write_bytes(case.body)
        return f"curl -sS -X POST {shlex.quote(url)} {headers} --data-binary @{shlex.quote(str(spill))}"
    escaped = "".join(
        chr(b) if 0x20 <= b < 0x7F and chr(b) not in "'\\%" else f"\\{b:03o}" for b in case.body
    )
    return f"printf '{escaped}' | curl -sS -X POST {shlex.quote(url)} {headers} --data-binary @-"


def fuzz_profile(
    profile: str,
    gateway_url: str,
    key: str | None,
    tap: UpstreamTap | None,
    *,
    examples: int,
    seconds: float | None,
    seed: int,
    timeout: float,
    models: Sequence[str] = (),
    spill_dir: Path | None = None,
) -> ProfileRun:
    """Send `examples` generated cases one after the other (each one's upstream requests are told apart by
    sending nothing else meanwhile); at the first that breaks an invariant, stop and let hypothesis shrink it."""
    import httpx

    from harness.fuzz.invariants import Exchange, check, style_for
    from harness.fuzz.shrink import shrink
    from harness.fuzz.strategies import example_source
    from harness.fuzz.wire import Connection

    style = style_for(profile)
    models = list(models) or _models(profile)
    gen = _generator(profile, models)
    url = gateway_url.rstrip("/") + "/" + _surface(profile).endpoint
    figures = Figures()
    started = time.time()
    deadline = time.monotonic() + seconds if seconds is not None else None
    failing: list[Failure] = []

    with Connection(url) as client:

        def exchange_of(case: Any) -> tuple[Any, list[Any]]:
            if tap is not None:
                tap.take()
            answer = _send(client, url, key, case, timeout)
            upstream = tap.take() if tap is not None else None
            exchange = Exchange(case, answer, upstream)
            return exchange, list(check(exchange, style))

        def record(exchange: Any, violations: list[Any], where: str) -> None:
            spill = spill_dir / f"{profile}-repro.body" if spill_dir is not None else None
            failing.append(Failure(exchange, violations, curl_repro(url, exchange.case, spill), where))

        failed: tuple[int, Any, Any, list[Any]] | None = None
        for index in range(examples):
            if deadline is not None and time.monotonic() > deadline:
                break
            source = example_source(seed, index)
            exchange, violations = exchange_of(gen.case(source))
            figures.count(exchange, violations)
            if violations:
                failed = (index, source, exchange, violations)
                break
        if failed is not None:
            index, source, exchange, violations = failed
            where = f"example {index} of seed {seed}"
            record(exchange, violations, f"{where}, unshrunk")
            broken = {v.rule_id for v in violations}

            def fails(case: Any) -> bool:
                again, found = exchange_of(case)
                if not any(v.rule_id in broken for v in found):
                    return False  # a different failure: shrinking keeps to the invariant(s) first broken
                record(again, found, f"{where}, shrunk by hypothesis")
                return True

            if not shrink(gen, source.tape, fails):
                failing[-1].found = f"{where}; unshrunk: hypothesis could not reproduce it"
    with httpx.Client(timeout=httpx.Timeout(timeout), trust_env=False) as plain:
        healthy = _health(plain, gateway_url, key, models, timeout)
    figures.seconds = time.time() - started
    return ProfileRun(
        profile,
        gateway_url,
        figures,
        failing[-1] if failing else None,
        healthy,
        started,
        time.time(),
        tap is not None,
    )


def _health(
    client: Any, gateway_url: str, key: str | None, models: Sequence[str], timeout: float
) -> str | None:
    import httpx

    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        response = client.get(gateway_url.rstrip("/") + "/models", headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        return f"GET /models failed after the run ({type(exc).__name__})"
    if response.status_code != 200:
        return f"GET /models answered {response.status_code} after the run"
    return None


def _surface(profile: str) -> Surface:
    """The profile's inbound surface; fuzz generates its bodies from the surface's request schema (the surface's
    own, else the fuzz's: bodies.py), so a surface the fuzz does not speak cannot be fuzzed."""
    from harness.spec import load_profile
    from harness.surfaces import surface

    found = surface(load_profile(profile).surface)
    _bodies_of(profile, found)
    return found


def _bodies(profile: str) -> Any:
    return _bodies_of(profile, _surface(profile))


def _bodies_of(profile: str, found: Surface) -> Any:
    from harness.fuzz.bodies import bodies_for

    bodies = bodies_for(found.name)
    if bodies is None:
        raise FuzzConfigError(f"profile {profile}: fuzz has no request schema for the {found.title} surface")
    return bodies
