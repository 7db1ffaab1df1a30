"""Which recorded interaction answers a request (vcrpy style): pure `(probe, recorded) -> why not` matchers,
and, when none matches, a diagnosis of the closest recordings and which matcher failed for each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.cassette.bodies import stream_flag
from harness.families import endpoint_kind

if TYPE_CHECKING:
    from harness.cassette.document import Cassette, RecordedRequest


@dataclass(frozen=True)
class Probe:
    """The live request being matched."""

    method: str
    path: str
    body_json: Any


Matcher = Callable[[Probe, "RecordedRequest"], "str | None"]  # None when it matches, else why not


def match_method(probe: Probe, recorded: RecordedRequest) -> str | None:
    if probe.method.upper() == recorded.method.upper():
        return None
    return f"method {probe.method.upper()} != {recorded.method}"


def match_endpoint(probe: Probe, recorded: RecordedRequest) -> str | None:
    got, want = endpoint_kind(probe.path), endpoint_kind(recorded.path)
    if got is not None and got == want:
        return None
    return f"endpoint {got or probe.path} != {want or recorded.path}"


def match_stream(probe: Probe, recorded: RecordedRequest) -> str | None:
    got, want = stream_flag(probe.body_json, probe.path), recorded.stream
    if got == want:
        return None
    return f"stream {str(got).lower()} != {str(want).lower()}"


MATCHERS: tuple[tuple[str, Matcher], ...] = (
    ("method", match_method),
    ("endpoint", match_endpoint),
    ("stream", match_stream),
)


@dataclass(frozen=True)
class Mismatch:
    interaction: int
    failed: tuple[str, ...]  # matcher names
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class MatchResult:
    candidates: tuple[int, ...]  # indexes of matching interactions, in cassette order
    closest: tuple[Mismatch, ...] = field(default=())  # filled only when nothing matched

    @property
    def ok(self) -> bool:
        return bool(self.candidates)

    def describe(self) -> str:
        if self.ok:
            return f"matched interactions {list(self.candidates)}"
        parts = [f"#{m.interaction} ({'; '.join(m.reasons)})" for m in self.closest]
        return "no interaction matches; closest: " + (", ".join(parts) or "none")


def match(
    cassette: Cassette,
    method: str,
    path: str,
    body_json: Any,
    matchers: tuple[tuple[str, Matcher], ...] = MATCHERS,
    max_closest: int = 3,
) -> MatchResult:
    probe = Probe(method=method, path=path, body_json=body_json)
    candidates: list[int] = []
    misses: list[Mismatch] = []
    for i, it in enumerate(cassette.interactions):
        failures = [(name, why) for name, fn in matchers if (why := fn(probe, it.request)) is not None]
        if not failures:
            candidates.append(i)
        else:
            misses.append(Mismatch(i, tuple(n for n, _ in failures), tuple(w for _, w in failures)))
    if candidates:
        return MatchResult(candidates=tuple(candidates))
    misses.sort(key=lambda m: (len(m.failed), m.interaction))
    return MatchResult(candidates=(), closest=tuple(misses[:max_closest]))
