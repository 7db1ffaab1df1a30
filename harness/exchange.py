"""What one run of one rule saw: the request sent, the gateway's answer, and the upstream side.

Plain frozen values, filled by the runner and read by the pure checks. Header names are lower-case;
repeated headers are joined with ", ".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SentRequest:
    """The request the harness sent to the gateway."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes
    json: Any = None  # the parsed body when it was JSON, else None
    # How it was sent: `http`, or `websocket` (the surface's transport variant: `url` is the ws:// address the
    # upgrade went to, `headers` the upgrade's, `body` the message that started the turn, `json` the request body
    # that message carries, as the HTTP request would carry it).
    transport: str = "http"


SWITCHING_PROTOCOLS = 101  # a WebSocket upgrade accepted: the socket then carries the answer's events


def served_status(status: int | None) -> bool:
    """Whether an answer was served: a 2xx, or an accepted WebSocket upgrade whose socket carried the events."""
    return status is not None and (200 <= status < 300 or status == SWITCHING_PROTOCOLS)


@dataclass(frozen=True)
class ReceivedResponse:
    """The gateway's answer as received. `status` is None when no response arrived at all.

    Over a WebSocket (`SentRequest.transport`), `status`, `headers` are the upgrade's answer (101, or the refusal's
    status, headers and body), and `raw` holds the events of the turn as the SSE framing the HTTP path receives
    (`event: <type>` / `data: <the message>`), so every check reads both transports alike."""

    status: int | None
    headers: Mapping[str, str]
    raw: bytes  # the body bytes as they arrived (streams included), capped by the runner
    transport_error: str | None = (
        None  # "timeout after 30s", "connection reset", ... (after any bytes received)
    )
    elapsed: float = 0.0
    truncated: bool = False  # the runner stopped reading at its byte cap
    # When the body arrived: per read, (bytes received so far, seconds since the request was sent). What lets a
    # check tell a stream from an answer held back and sent at once (the `streamed` expectation).
    arrivals: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class ServedAnswer:
    """What the replay upstream answered to one upstream call."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    cassette: str | None = None
    interaction: int | None = None
    fault: Mapping[str, Any] | None = None
    provider_refusal: str | None = None  # what the provider it plays would refuse in the request
    paced_seconds: float = 0.0  # the pauses the replay put between the answer's pieces (`pacing`, faults)


@dataclass(frozen=True)
class UpstreamCall:
    """One request the gateway made to the replay upstream for this case, and the answer it got."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    json: Any = None
    served: ServedAnswer | None = None
    query: str = ""  # the URL's query string (Gemini streams with `?alt=sse`)


@dataclass(frozen=True)
class ListenerRecord:
    """The harness's own loopback listener (`${listener_url}` in a request): what connected to it.

    The runner opens it before sending and closes it after the answer; a gateway that must not touch
    an address (EZAT: "The host must be a public address") leaves `connections` empty.
    """

    url: str
    connections: tuple[bytes, ...] = ()  # per accepted connection: the first bytes it sent (may be empty)


@dataclass(frozen=True)
class Exchange:
    rule_id: str
    variant: Mapping[str, Any]
    request: SentRequest
    response: ReceivedResponse
    # None when the upstream side cannot be observed (live mode): upstream checks then cannot run.
    upstream: tuple[UpstreamCall, ...] | None = None
    marker: str | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    # The same request sent with stream=false, for `stream_matches_nonstream`.
    companion: Exchange | None = None
    # The listener, when the request named `${listener_url}` (None: the rule opened none).
    listener: ListenerRecord | None = None
    # The rule's `then` steps, in order: the first request again with each step's changes.
    steps: tuple[Exchange, ...] = ()
    # The inbound surface the request was made in (harness/surfaces/): it says what the answer means.
    surface: str = "chat-completions"
    # What the gateway's set-up declares for its claimed features, by feature, keys left out
    # (harness/featuresetup.py): what `own_limit`, `forwards_headers` and `cost` read.
    setup: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
