"""Where a kill-matrix run spends its time: the rig's start-up, each rule variant of the baseline, and the
replay control calls (register / calls / forget per exchange) inside them.

    PYTHONPATH=. python3 benchmarks/profile_kill_matrix.py [--jobs 4] [--feature slow]

Prints the start-up time, the baseline's wall time, the summed variant seconds, the slowest variants and
the share of the replay control calls. (Per mutant, the old one-mutant-at-a-time run repeated the whole
baseline; the pooled run repeats only what `harness.mutants.reach` says the mutant can change.)
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

from harness.cli import build_parser
from harness.mutants.catalog import load_catalog
from harness.mutants.command import BASE_FEATURES, rig
from harness.mutants.kill import case_key, cases_of, run_catalog
from harness.mutants.schedule import plan
from harness.paths import specs_dir
from harness.replay.client import ReplayClient
from harness.spec import load_profile, load_rule_file
from harness.spec.selection import rule_files


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--feature", action="append", default=[])
    ap.add_argument("--profile", default="ezat")
    opts = ap.parse_args(argv)
    args = build_parser().parse_args(["mutants", "--profile", opts.profile, "--jobs", str(opts.jobs)])
    profile = load_profile(opts.profile)
    rules = [r for f in rule_files(specs_dir() / opts.profile) for r in load_rule_file(f).rules]
    cases = cases_of(rules)
    models = {role: spec.default for role, spec in profile.models.items()}
    control = {"calls": 0, "seconds": 0.0}
    lock = threading.Lock()
    original = ReplayClient._request

    def timed(self, *a, **k):  # type: ignore[no-untyped-def]
        t = time.monotonic()
        try:
            return original(self, *a, **k)
        finally:
            with lock:
                control["calls"] += 1
                control["seconds"] += time.monotonic() - t

    ReplayClient._request = timed  # type: ignore[method-assign]
    t0 = time.monotonic()
    with rig(
        args, models, frozenset(BASE_FEATURES) | frozenset(opts.feature), Path("/tmp/gc-profile.log")
    ) as r:
        up = time.monotonic() - t0
        t1 = time.monotonic()
        outcomes = run_catalog(cases, r.target, r.http, r.replay, opts.jobs)
        wall = time.monotonic() - t1
    ran = [o for o in outcomes if o.outcome != "NOT_APPLICABLE"]
    total = sum(o.duration for o in ran)
    print(f"rig start-up (replay, proxies, reference gateway): {up:.2f}s")
    print(
        f"baseline: {len(outcomes)} variants ({len(ran)} applicable), wall {wall:.1f}s on {opts.jobs} threads"
    )
    print(
        f"summed variant seconds {total:.1f}s, median {sorted(o.duration for o in ran)[len(ran) // 2]:.3f}s"
    )
    print(
        f"replay control calls: {control['calls']} taking {control['seconds']:.1f}s summed "
        f"({100 * control['seconds'] / max(total, 1e-9):.0f}% of variant seconds)"
    )
    print("slowest variants:")
    for o in sorted(ran, key=lambda o: -o.duration)[:12]:
        print(f"  {o.duration:7.2f}s  {case_key(o.rule_id, o.variant)}")
    rest = sorted(ran, key=lambda o: -o.duration)[12:]
    print(f"the other {len(rest)} variants: {sum(o.duration for o in rest):.1f}s summed")
    mutants = [m for m in load_catalog().mutants if opts.profile in m.profiles]
    pairs, _ = plan(mutants, outcomes)
    cost = sum(p.cost for p in pairs)
    print(
        f"plan for all {len(mutants)} mutants: {len(pairs)} (mutant, variant) pairs of "
        f"{len(mutants) * len(outcomes)} ({sum(p.exclusive for p in pairs)} exclusive), "
        f"{cost:.0f} variant-seconds by the baseline's durations (~{cost / opts.jobs:.0f}s on {opts.jobs} threads)"
    )
    by_case: dict[int, float] = {}
    for p in pairs:
        by_case[p.case] = by_case.get(p.case, 0.0) + p.cost
    print("variants costing the plan most:")
    for i, c in sorted(by_case.items(), key=lambda kv: -kv[1])[:8]:
        o = outcomes[i]
        n = sum(1 for p in pairs if p.case == i)
        print(f"  {c:7.1f}s  {n:3d} mutants  {case_key(o.rule_id, o.variant)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
