"""The whole kill matrix in one pool: every (mutant, rule variant) pair that can differ from the baseline.

`reach.reaches` keeps only the rule variants a mutant can change; the others keep their baseline
outcome (which kills nothing: a variant failing without a mutant is ignored as a killer anyway). The
remaining pairs of all mutants run interleaved on `jobs` threads, the costliest first (the baseline's
durations are the estimate), because the proxies pick each request's mutant from its
`x-gc-mutant` header (client side) or its case marker (upstream side) — not from one global setting.
The exception: an upstream-side mutant on a rule variant that sends no case marker, whose upstream
traffic the proxy cannot attribute; those pairs run afterwards, one mutant at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import httpx

from harness.engine.run import run_rule
from harness.engine.target import Outcome
from harness.mutants.catalog import Mutant
from harness.mutants.kill import Case, Kill, MutantResult, kills_of
from harness.mutants.proxy import MUTANT_HEADER
from harness.mutants.reach import reaches


@dataclass(frozen=True)
class Pair:
    mutant: Mutant
    case: int  # index into the cases (and the baseline outcomes)
    exclusive: bool  # upstream-side mutant, variant without a case marker: runs alone
    cost: float


def plan(
    mutants: Sequence[Mutant], baseline: Sequence[Outcome], upstream_blind: bool = False
) -> tuple[list[Pair], dict[str, int]]:
    """The pairs to run (costliest first, exclusive ones last) and, per mutant, how many variants it reuses.

    `upstream_blind`: the baseline saw upstream traffic it could not attribute to a case, so an
    upstream-side mutant is run on every applicable variant.
    """
    pairs: list[Pair] = []
    reused: dict[str, int] = {}
    for m in mutants:
        hit = [
            i
            for i, b in enumerate(baseline)
            if reaches(m, b) or (upstream_blind and m.side == "upstream" and b.outcome != "NOT_APPLICABLE")
        ]
        reused[m.id] = len(baseline) - len(hit)
        for i in hit:
            ex = baseline[i].exchange
            exclusive = m.side == "upstream" and (ex is None or ex.marker is None)
            pairs.append(Pair(m, i, exclusive, baseline[i].duration))
    order = {m.id: n for n, m in enumerate(mutants)}
    pairs.sort(key=lambda p: (p.exclusive, -p.cost, order[p.mutant.id], p.case))
    return pairs, reused


class MutantRouting:
    """Thread-local mutant id, stamped on each request the harness sends (an httpx request hook)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def set(self, mutant_id: str | None) -> None:
        self._local.mutant = mutant_id

    def hook(self, request: httpx.Request) -> None:
        mutant_id = getattr(self._local, "mutant", None)
        if mutant_id is not None:
            request.headers[MUTANT_HEADER] = mutant_id


def run_pairs(
    rig: Any,
    routing: MutantRouting,
    mutants: Sequence[Mutant],
    cases: Sequence[Case],
    baseline: Sequence[Outcome],
    broken: frozenset[str],
    jobs: int,
    on_result: Callable[[MutantResult], None] = lambda r: None,
    upstream_blind: bool = False,
) -> list[MutantResult]:
    """Run every reachable pair; one MutantResult per mutant (in the given order).

    `rig` is a `harness.mutants.command.Rig` (target, http, replay, use()); its http client carries
    `routing.hook` as a request hook.
    """
    pairs, reused = plan(mutants, baseline, upstream_blind)
    left = {m.id: 0 for m in mutants}
    for p in pairs:
        left[p.mutant.id] += 1
    # Only the kills are kept: an outcome's exchange can hold tens of megabytes (the 32 MB body rules).
    kills: dict[str, list[tuple[int, Kill]]] = {m.id: [] for m in mutants}
    ran = dict.fromkeys(left, 0)
    seconds = dict.fromkeys(left, 0.0)
    results: dict[str, MutantResult] = {}
    lock = threading.Lock()

    def finish(m: Mutant) -> None:
        in_case_order = tuple(k for _, k in sorted(kills[m.id], key=lambda ik: ik[0]))
        result = MutantResult(m, in_case_order, ran[m.id], seconds[m.id], reused=reused[m.id])
        results[m.id] = result
        on_result(result)

    def one(p: Pair) -> Outcome:
        routing.set(p.mutant.id)
        started = time.monotonic()
        try:
            rule, variant = cases[p.case]
            return run_rule(rule, variant, rig.target, rig.http, rig.replay)
        finally:
            routing.set(None)
            with lock:
                seconds[p.mutant.id] += time.monotonic() - started

    def done(p: Pair, outcome: Outcome) -> None:
        kills[p.mutant.id] += [(p.case, k) for k in kills_of([outcome], broken)]
        ran[p.mutant.id] += 1
        left[p.mutant.id] -= 1
        if left[p.mutant.id] == 0:
            finish(p.mutant)

    for m in mutants:  # a mutant that reaches nothing is decided by the baseline alone
        if left[m.id] == 0:
            finish(m)
    shared = [p for p in pairs if not p.exclusive]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running: dict[Future[Outcome], Pair] = {}
        queue = iter(shared)
        for p in queue:
            running[pool.submit(one, p)] = p
            if len(running) >= max(1, jobs) * 2:
                break
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in finished:
                done(running.pop(f), f.result())
                nxt = next(queue, None)
                if nxt is not None:
                    running[pool.submit(one, nxt)] = nxt
        by_mutant: dict[str, list[Pair]] = {}
        for p in pairs:
            if p.exclusive:
                by_mutant.setdefault(p.mutant.id, []).append(p)
        for group in by_mutant.values():
            rig.use(group[0].mutant)
            try:
                for p, outcome in zip(group, pool.map(one, group), strict=True):
                    done(p, outcome)
            finally:
                rig.use(None)
    return [results[m.id] for m in mutants]
