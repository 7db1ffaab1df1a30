"""`gateway-conformance fuzz`: hostile requests, generated from a seed and shrunk by hypothesis, against a gateway.

Checks what any gateway owes its clients (`invariants.py`): no 5xx for a client's mistake, every error in the
profile's shape, no hang, still healthy afterwards and — with the replay upstream in front of which the gateway
runs — no invalid JSON upstream and no upstream request at all for a body the doc refuses. A failure prints
hypothesis's shrunk minimal body and a one-line curl repro. Results are written in certify's report format with
the area `robustness`. Exit codes: 0 nothing found, 1 an invariant broken, 2 the harness failed, 3 bad
configuration.

Wire it into the CLI with `harness.fuzz.main(argv)` (argv after `fuzz`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cassette.bodies import receive_body
from harness.errors import ConfigError

EXIT_OK, EXIT_FAILURES, EXIT_HARNESS, EXIT_CONFIG = 0, 1, 2, 3
KEY_ENV = "GC_GATEWAY_KEY"


class FuzzConfigError(ConfigError):
    """Bad configuration: exit 3."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gateway-url", help="your gateway's OpenAI base URL (default: the embedded reference gateway)"
    )
    parser.add_argument("--gateway-key", help=f"its API key (default: ${KEY_ENV})")
    parser.add_argument(
        "--profile",
        action="append",
        help="profile(s) to fuzz (repeatable; with --gateway-url: one; default: all)",
    )
    parser.add_argument(
        "--model", action="append", default=[], help="a model id to use (default: the profile's)"
    )
    parser.add_argument(
        "--replay-port", type=int, help="serve the observed replay upstream on 127.0.0.1:P for your gateway"
    )
    parser.add_argument("--examples", type=int, default=1000, help="examples per profile (default 1000)")
    parser.add_argument("--seconds", type=float, help="stop a profile after about this many seconds")
    parser.add_argument(
        "--seed", type=int, default=0, help="the generator's seed (fixed: the same bodies every run)"
    )
    parser.add_argument(
        "--rule-timeout", type=float, default=30.0, help="seconds one request may take (default 30)"
    )
    parser.add_argument(
        "--report-dir", help="where to write <profile>/robustness.json (default: ./gc-report/fuzz-<UTC>)"
    )


# --------------------------------------------------------------------------------------- the upstream tap


class UpstreamTap:
    """ASGI middleware in front of the replay upstream's app: remembers every request body it receives."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._bodies: list[bytes] = []
        self.enabled = True  # certify keeps the tap off while the catalog runs

    def take(self) -> list[bytes]:
        with self._lock:
            bodies, self._bodies = self._bodies, []
        return bodies

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.enabled or scope["type"] != "http" or scope.get("path", "").startswith("/__gc/"):
            await self.app(scope, receive, send)
            return
        body = await receive_body(receive)
        with self._lock:
            self._bodies.append(body)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


@contextlib.contextmanager
def tapped_replay(port: int = 0) -> Iterator[tuple[str, UpstreamTap]]:
    """The replay upstream (as certify serves it) behind an `UpstreamTap`."""
    from harness.paths import cassettes_dir
    from harness.replay.server import ReplayServer

    server = ReplayServer(cassettes_dir(), port=port)
    tap = UpstreamTap(server.app)
    server.app = tap  # type: ignore[assignment]  # start() serves `app`, any ASGI app
    server.start()
    try:
        yield server.url, tap
    finally:
        server.stop()


# --------------------------------------------------------------------------------------- one profile


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

    return generator(profile, models, other_types_refused=style_for(profile).other_content_types_refused)


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

    headers = f"-H 'authorization: Bearer ${KEY_ENV}'"
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
    url = gateway_url.rstrip("/") + "/chat/completions"
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


# --------------------------------------------------------------------------------------- the command


def _summary(run: ProfileRun) -> str:
    f = run.figures
    return (
        f"fuzz {run.profile}: {f.examples} examples in {f.seconds:.1f}s — 5xx {f.server_errors}, non-envelope "
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
    from harness.orchestrate.child import profiles_with_rules
    from harness.paths import specs_dir
    from harness.spec.collection import CatalogError, check_catalog

    try:
        check_catalog([specs_dir() / p for p in (profiles or profiles_with_rules())])
    except CatalogError as exc:
        raise FuzzConfigError(str(exc)) from exc


def _run(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    if args.examples < 1:
        raise FuzzConfigError("--examples must be at least 1")
    _check_catalogs(args.profile)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_dir = Path(args.report_dir or Path("gc-report") / f"fuzz-{stamp}")
    budget = {
        "examples": args.examples,
        "seconds": args.seconds,
        "seed": args.seed,
        "timeout": args.rule_timeout,
    }
    runs: list[ProfileRun] = []
    if args.gateway_url:
        if not args.profile or len(args.profile) != 1:
            raise FuzzConfigError("--gateway-url needs exactly one --profile NAME")
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
        from harness.orchestrate.child import profiles_with_rules
        from harness.orchestrate.embedded import reference_gateway
        from harness.orchestrate.embedded_catalog import gateways_for

        # the reference gateway's own profiles: a catalog it serves under other profiles (openai) has no
        # gateway profile of its name to start, and its gateways are fuzzed under their own names
        own = [p for p in profiles_with_rules() if gateways_for(p) == (p,)]
        foreign = [p for p in args.profile or () if p not in own]
        if foreign:
            raise FuzzConfigError(
                f"the reference gateway has no profile {', '.join(foreign)}; fuzz one of {', '.join(own)}, "
                "or your gateway with --gateway-url"
            )
        launch = reference_gateway
        key = secrets.token_urlsafe(24)
        with tapped_replay() as (replay_url, tap):
            for profile in args.profile or own:
                log = out_dir / profile / "gateway.log"
                with launch(profile, replay_url, key, log) as url:
                    run = fuzz_profile(profile, url, key, tap, models=args.model, spill_dir=out_dir, **budget)
                runs.append(run)
                print(_summary(run), flush=True)
                print(
                    f"results: {_write(run, out_dir, args, replay_url, 'reference gateway (embedded)')}",
                    flush=True,
                )
    for run in runs:
        _print_failure(run)
        if run.healthy is not None:
            print(f"\nFAIL {run.profile}: {run.healthy}", file=sys.stderr)
    broken = [r.profile for r in runs if r.failure is not None or r.healthy is not None]
    print(
        "verdict: " + (f"invariants broken ({', '.join(broken)})" if broken else "nothing found"), flush=True
    )
    return EXIT_FAILURES if broken else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gateway-conformance fuzz", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return EXIT_CONFIG if exc.code not in (0, None) else EXIT_OK
    try:
        return _run(args)
    except FuzzConfigError as exc:
        print(f"gateway-conformance fuzz: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as exc:  # the harness failed (a gateway that would not start, a broken replay upstream)
        if type(exc).__name__ in ("HarnessFailure", "HarnessError", "ConfigError"):
            print(f"gateway-conformance fuzz: harness failure: {exc}", file=sys.stderr)
            return EXIT_HARNESS
        raise


if __name__ == "__main__":
    sys.exit(main())
