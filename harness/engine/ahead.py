"""Rules run ahead of the loop that reports them: several at a time on threads, the ones that wait on a clock
(an upstream pause, a timeout the gateway must reach, a slow download, a `then` step's delay) started first, so
that a catalog takes about as long as its longest wait or the rest of its work, whichever is longer, and not
their sum. The reporting loop (pytest's, in rule order) takes each result when it comes to it.

Every exchange carries its own case marker (the replay upstream keeps one plan and one call log per marker),
so rules in flight together do not see each other's upstream calls. Nothing here imports pytest.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from harness.engine.render import upstream_plan
from harness.engine.target import Outcome, Target
from harness.spec.model import Rule

# `${images_url}/slow.png?delay=S`: the file server's slow download (harness/replay/files.py, 20 s by default).
_SLOW_FILE = re.compile(r"/slow\.[a-z]+(?:\?delay=([0-9.]+))?")
_SLOW_FILE_DEFAULT = 20.0
# Keys of an upstream plan whose number is seconds the upstream stays silent.
_SECONDS_KEYS = frozenset({"first_byte_delay", "seconds", "delay"})


def expected_wait(rule: Rule, variant: Mapping[str, Any], target: Target) -> float:
    """Seconds of clock time the rule variant spends waiting, as its data says (0 for most rules): the
    upstream's silences (with the target's declared keep-alive silence and non-streaming limit filled in),
    its pacing, slow downloads the request names, the `then` steps' delays. An ordering key, not a promise."""
    wait = _plan_seconds(upstream_plan(rule.upstream, target))
    pacing = (rule.upstream or {}).get("pacing")
    if isinstance(pacing, (int, float)):
        wait += float(pacing) * 50  # seconds per event; a long cassette has some tens of events
    for match in _SLOW_FILE.finditer(repr(rule.request)):
        wait += float(match.group(1) or _SLOW_FILE_DEFAULT)
    wait += sum(float(step.get("delay") or 0) for step in rule.then)
    if variant.get("stream") is True and rule.expect_for(variant).get("stream_matches_nonstream"):
        wait *= 2  # the non-streamed companion waits again
    return wait


def _plan_seconds(plan: Any) -> float:
    if isinstance(plan, Mapping):
        return sum(
            float(v) if k in _SECONDS_KEYS and isinstance(v, (int, float)) else _plan_seconds(v)
            for k, v in plan.items()
        )
    if isinstance(plan, list):
        return sum(_plan_seconds(v) for v in plan)
    return 0.0


WAITER_SECONDS = 1.0  # a job expected to wait this long on a clock gets a thread of its own


class RunAhead:
    """Runs jobs ahead of whoever reports them: a job expected to wait on a clock (WAITER_SECONDS or more)
    on a thread of its own, started first, so that the waits overlap each other and the rest; every other
    job on `workers` threads. `take(key)` is a job's outcome, in whatever order the caller asks for them
    (waiting for it if it is still running)."""

    def __init__(self, workers: int) -> None:
        self._workers = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="gc-rule")
        self._waiters: ThreadPoolExecutor | None = None
        self._futures: dict[Hashable, Future[Outcome]] = {}
        self._lock = threading.Lock()

    def start(self, jobs: Iterable[tuple[Hashable, float, Callable[[], Outcome]]]) -> None:
        """Submit every (key, expected wait, job): the waiters first, each on its own thread, then the rest in
        the order given."""
        jobs = list(jobs)
        waiters = [job for job in jobs if job[1] >= WAITER_SECONDS]
        if waiters:
            self._waiters = ThreadPoolExecutor(max_workers=len(waiters), thread_name_prefix="gc-wait")
        for key, wait, job in sorted(waiters, key=lambda j: -j[1]) + [
            j for j in jobs if j[1] < WAITER_SECONDS
        ]:
            pool = self._waiters if wait >= WAITER_SECONDS and self._waiters is not None else self._workers
            future = pool.submit(job)
            with self._lock:
                self._futures[key] = future

    def take(self, key: Hashable) -> Outcome | None:
        """The job's outcome (re-raising what it raised), or None when no job has this key."""
        with self._lock:
            future = self._futures.pop(key, None)
        return None if future is None else future.result()

    def close(self, wait: bool = True) -> None:
        """Drop the jobs that have not started (a run stopped early: -x, an interrupt) and wait for the rest,
        each bounded by its rule timeout; interrupted (`wait=False`), wait for none: the run writes what it judged
        and ends now (issue 48)."""
        with self._lock:
            pending, self._futures = list(self._futures.values()), {}
        for future in pending:
            future.cancel()
        for pool in (self._workers, self._waiters):
            if pool is not None:
                pool.shutdown(wait=wait, cancel_futures=True)


__all__ = ["RunAhead", "expected_wait"]
