"""`streamed`: a streamed answer reached the client as the provider streamed it, not held back and sent at once.

The exchange records when each read of the answer arrived (`ReceivedResponse.arrivals`) and the replay records how
long the provider it played took to send its answer (`ServedAnswer.paced_seconds`, from the rule's `pacing`). The
content events (a text or arguments delta: the surface says which) must reach the client spread over time:

- `{fraction: F}` (replay): over at least F times the provider's paced time. A gateway may batch a little (F below
  1 leaves room for it); one that waits for the whole answer, or asks the provider without streaming and writes the
  events at the end, delivers them within milliseconds of each other.
- `{seconds: S}` (the live form): over at least S seconds, for a long answer a real model writes token by token.

Pure: times are the runner's measurements, read here, never taken.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from harness.errors import CheckError
from harness.exchange import Exchange, served_status
from harness.surfaces import reading, surface_of
from harness.violation import Violation


def arrival_time(arrivals: Sequence[tuple[int, float]], offset: int) -> float | None:
    """When the byte at `offset` (exclusive end) had arrived: the first read that brought the body that far."""
    for received, seconds in arrivals:
        if received >= offset:
            return seconds
    return None


def content_spread(exchange: Exchange) -> tuple[int, float] | Violation:
    """(content events, seconds between the first one's arrival and the last one's), or why it cannot be read."""
    response = exchange.response
    surface = surface_of(exchange)
    if not served_status(response.status) or not reading.is_stream(response):
        return Violation("streamed", "$", "a streamed answer", response.status, "the answer is not a stream")
    if not response.arrivals:
        raise CheckError("the exchange holds no arrival times (it was not read by the harness's runner)")
    view = reading.stream_view(response.raw, surface.sentinel)
    events = view.decoded.events
    ends = [e.offset for e in events[1:]] + [len(response.raw)]
    content = [ends[i] for i, p in enumerate(view.payloads) if p.is_object and surface.content_event(p.json)]
    if len(content) < 2:
        return Violation(
            "streamed", "stream", "at least two content events", len(content),
            f"the stream has {len(content)} content event(s): nothing to time",
        )  # fmt: skip
    first = arrival_time(response.arrivals, content[0])
    last = arrival_time(response.arrivals, content[-1])
    if first is None or last is None:
        raise CheckError("the arrival times do not cover the body read")
    return len(content), last - first


def check_streamed(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    wanted: Mapping[str, Any] = expected if isinstance(expected, Mapping) else {}
    spread = content_spread(exchange)
    if isinstance(spread, Violation):
        yield spread
        return
    count, seconds = spread
    needed = float(wanted.get("seconds") or 0.0)
    paced = 0.0
    if "fraction" in wanted and exchange.upstream is not None:
        served = [
            c.served for c in exchange.upstream if c.served is not None and 200 <= c.served.status < 300
        ]
        streams = [s for s in served if "event-stream" in s.headers.get("content-type", "")]
        if served and not streams:
            yield Violation(
                "streamed", "upstream", "the provider asked to stream", "a whole answer",
                "the gateway asked the provider for the whole answer at once (no stream) and wrote the events "
                "itself: the client waits for the whole generation before its first event",
            )  # fmt: skip
            return
        # a rule with `fraction` paces its upstream (tests/specs hold every such rule to it); an unpaced answer
        # leaves only `seconds`
        paced = max((s.paced_seconds for s in streams), default=0.0)
        needed = max(needed, float(wanted["fraction"]) * paced)
    if seconds < needed:
        provider = f" though the provider took {paced:.2f}s to stream them" if paced else ""
        yield Violation(
            "streamed",
            "arrivals",
            {"spread_seconds_at_least": round(needed, 3)},
            {"content_events": count, "spread_seconds": round(seconds, 3)},
            f"the {count} content events reached the client within {seconds:.3f}s of each other{provider}: the "
            "answer was held back and sent at once (a buffered stream), which trips a client's idle timeout",
        )
