"""Hypothesis's shrinker on a failure the seeded fast path found.

The fast path builds each case from a `RandomSource` and keeps its tape (the integers it chose). A failing tape is
handed to hypothesis as a stored example (`_Seeded`), the test runs with only the
`reuse` and `shrink` phases, so hypothesis replays exactly that case, sees it fail and shrinks it with its own
shrinker — the generator reading its choices from hypothesis (`DrawSource`) — down to the smallest case that still
breaks one of the invariants the original broke.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence

from hypothesis.database import ExampleDatabase, InMemoryExampleDatabase, choices_to_bytes

from harness.errors import ShrinkOutOfTime, ShrinkStillFails
from harness.fuzz.strategies import Case, DrawSource, Generator


class _Seeded(ExampleDatabase):
    """An example database holding the failing tape in its secondary corpus, which is where hypothesis keeps
    "previously non-minimal examples of a bug": it replays them and, unlike its primary corpus of minimal
    failures, shrinks them. Served under every secondary key (hypothesis derives its key from the test function;
    this spares us that internal). What hypothesis saves while it shrinks is kept in memory and served too."""

    def __init__(self, tape: bytes) -> None:
        super().__init__()
        self._tape = tape
        self._saved = InMemoryExampleDatabase()

    def fetch(self, key: bytes) -> Iterable[bytes]:
        if key.endswith(b".secondary"):
            yield self._tape
        yield from self._saved.fetch(key)

    def save(self, key: bytes, value: bytes) -> None:
        self._saved.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._saved.delete(key, value)


def shrink(
    generator: Generator, tape: Sequence[int], fails: Callable[[Case], bool], *, seconds: float = 60.0
) -> bool:
    """Shrink the failing case `tape` makes with hypothesis: `fails(case)` sends a case and says whether it breaks
    the original invariants (and records it: the last recorded is the smallest so far). After `seconds` the
    shrinking stops where it is (each try is a request; a failure only one exact body triggers can make
    hypothesis try thousands). False when hypothesis could not reproduce the failure from the tape (a gateway
    whose answers change from one request to the next)."""
    import time

    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisException

    @st.composite
    def cases(draw: st.DrawFn) -> Case:
        return generator.case(DrawSource(draw))

    reproduced = [False]
    stop = time.monotonic() + seconds

    def test(case: Case) -> None:
        if reproduced[0] and time.monotonic() > stop:
            raise ShrinkOutOfTime
        if fails(case):
            reproduced[0] = True
            raise ShrinkStillFails

    # seed() first: it also clears the database, which the settings applied after it set again
    prop = seed(0)(given(cases())(test))  # the shrinker's own randomness fixed: the same shrink every run
    prop = settings(
        database=_Seeded(choices_to_bytes(tape)),
        phases=[Phase.reuse, Phase.shrink],
        max_examples=1,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
    )(prop)
    # hypothesis ends by replaying the minimal case and raising its error; a flaky gateway makes it raise its own
    with contextlib.suppress(ShrinkStillFails, ShrinkOutOfTime, HypothesisException):
        prop()
    return reproduced[0]
