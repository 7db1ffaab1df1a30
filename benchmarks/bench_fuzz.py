"""Examples per second of `gateway-conformance fuzz` against the embedded reference gateway, and where they go.

    python benchmarks/bench_fuzz.py [--profile ezat] [--examples 2000] [--seed 0] [--baseline 300] [--json out]

Per profile, in one run and against the same embedded gateway (started as `gateway-conformance fuzz` starts it:
`harness.orchestrate.embedded.reference_gateway` behind the observed replay upstream):

- baseline: the bare HTTP exchange — one fixed small request (a refused, truncated body: no upstream call) sent
  `--baseline` times in a row over one keep-alive httpx client, and one fixed well-formed request (answered
  through the replay upstream) — so the fuzz figure can be read as a ratio on a loaded machine;
- generation: the fuzz's own example source run for `--examples` examples with nothing sent (hypothesis);
- fuzz: `harness.fuzz.run.fuzz_profile` for `--examples` examples, with the time spent inside sending and judging
  summed (over every worker, when sending is concurrent).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _baseline(url: str, key: str, models: list[str], n: int) -> dict[str, float]:
    """Fixed requests per second over one keep-alive httpx client (its own code, the same before and after the
    fuzz's changes, so it measures the machine and the gateway, not the fuzzer)."""
    import httpx

    refused = b'{"model": "x", "messa'
    plain = json.dumps(
        {"model": models[0] if models else "m", "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    out: dict[str, float] = {}
    with httpx.Client(timeout=30.0, trust_env=False) as client:
        for name, body in (("refused", refused), ("answered", plain)):
            client.post(url, content=body, headers=headers)  # warm the connection
            started = time.perf_counter()
            for _ in range(n):
                client.post(url, content=body, headers=headers).read()
            out[f"{name}_per_s"] = n / (time.perf_counter() - started)
    return out


def _generation(profile: str, models: list[str], examples: int, seed: int) -> float:
    """Seconds to produce `examples` cases with nothing sent: the fuzz's own source when it has one, else the
    hypothesis strategy driven as fuzz_profile drives it."""
    import harness.fuzz.run as fuzz

    started = time.perf_counter()
    source = getattr(fuzz, "generate_cases", None)
    if source is not None:
        count = sum(1 for _ in source(profile, models, seed=seed, examples=examples))
    else:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as hypothesis_seed

        strategy = fuzz._strategy(profile, models)
        seen = [0]

        def one(case: Any) -> None:
            seen[0] += 1

        batch = 0
        while seen[0] < examples:
            before = seen[0]
            prop = given(strategy)(one)
            prop = settings(
                max_examples=min(fuzz._BATCH, examples - seen[0]),
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
                verbosity=Verbosity.quiet,
                phases=[Phase.generate, Phase.shrink],
            )(prop)
            hypothesis_seed(seed * 100_003 + batch)(prop)()
            batch += 1
            if seen[0] == before:
                break
        count = seen[0]
    elapsed = time.perf_counter() - started
    assert count == examples, (count, examples)
    return elapsed


@contextlib.contextmanager
def _timed_send_and_check() -> Any:
    """Sum the seconds spent in `harness.fuzz.run._send` and `harness.fuzz.invariants.check` (thread-safe enough:
    float += under the GIL per call)."""
    import threading

    import harness.fuzz.invariants as invariants
    import harness.fuzz.run as fuzz

    totals = {"send": 0.0, "check": 0.0}
    lock = threading.Lock()
    send, check = fuzz._send, invariants.check

    def timed_send(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return send(*args, **kwargs)
        finally:
            with lock:
                totals["send"] += time.perf_counter() - started

    def timed_check(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return list(check(*args, **kwargs))
        finally:
            with lock:
                totals["check"] += time.perf_counter() - started

    fuzz._send = timed_send  # type: ignore[assignment]
    invariants.check = timed_check  # type: ignore[assignment]
    try:
        yield totals
    finally:
        fuzz._send = send  # type: ignore[assignment]
        invariants.check = check  # type: ignore[assignment]


def bench(profile: str, examples: int, seed: int, baseline_n: int, work: Path) -> dict[str, Any]:
    from harness.fuzz.run import _models, fuzz_profile
    from harness.fuzz.tap import tapped_replay
    from harness.orchestrate.embedded import reference_gateway

    key = secrets.token_urlsafe(24)
    models = _models(profile)
    with (
        tapped_replay() as (replay_url, tap),
        reference_gateway(profile, replay_url, key, work / profile / "gateway.log") as url,
    ):
        tap.enabled = False
        base = _baseline(url.rstrip("/") + "/chat/completions", key, models, baseline_n)
        tap.enabled = True
        generation = _generation(profile, models, examples, seed)
        with _timed_send_and_check() as inside:
            started = time.perf_counter()
            run = fuzz_profile(
                profile, url, key, tap, examples=examples, seconds=None, seed=seed, timeout=30.0,
                spill_dir=work,
            )  # fmt: skip
            wall = time.perf_counter() - started
    if run.failure is not None:
        print(f"  (fuzz found a failure: {[v.rule_id for v in run.failure.violations]})", file=sys.stderr)
    done = run.figures.examples
    return {
        "profile": profile,
        "examples": done,
        "wall_s": round(wall, 3),
        "examples_per_s": round(done / wall, 1),
        "generation_s": round(generation, 3),
        "generation_per_s": round(examples / generation, 1),
        "send_s_summed": round(inside["send"], 3),
        "check_s_summed": round(inside["check"], 3),
        "baseline_refused_per_s": round(base["refused_per_s"], 1),
        "baseline_answered_per_s": round(base["answered_per_s"], 1),
        "ratio_to_refused_baseline": round(done / wall / base["refused_per_s"], 3),
        "failure": None if run.failure is None else [v.rule_id for v in run.failure.violations],
        "healthy": run.healthy,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="append", help="profile(s) (default: ezat, lyrouter, relay)")
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", type=int, default=300, help="fixed requests per baseline (default 300)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-fuzz-") as tmp:
        for profile in args.profile or ["ezat", "lyrouter", "relay"]:
            row = bench(profile, args.examples, args.seed, args.baseline, Path(tmp))
            rows.append(row)
            print(
                f"{profile}: {row['examples']} examples in {row['wall_s']:.1f} s = {row['examples_per_s']}/s "
                f"(generation alone {row['generation_s']:.1f} s = {row['generation_per_s']}/s; inside send "
                f"{row['send_s_summed']:.1f} s, judge {row['check_s_summed']:.2f} s, summed) | baseline "
                f"refused {row['baseline_refused_per_s']}/s, answered {row['baseline_answered_per_s']}/s | "
                f"fuzz/refused-baseline {row['ratio_to_refused_baseline']}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
