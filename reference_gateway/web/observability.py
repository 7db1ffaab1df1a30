"""Relay "Observability": X-Relay-Request-Id, X-Relay-Trace-Id and X-Relay-Observation-Id on every answer —
errors, 404s and streams included — and the attribution headers read into the request's trace record.

The trace record is logged as one line per request (ids and attribution only: no bodies, no keys, no images).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reference_gateway.policy.vocabulary import Relay

logger = logging.getLogger("reference_gateway.trace")

ATTRIBUTION_HEADERS = ("x-relay-user-id", "x-relay-session-id", "x-relay-tags")


class ObservabilityMiddleware:
    """Runs inside `RequestIdMiddleware`: the request id is the gateway's own; a trace id and an observation id
    are minted for each request (a client's well-formed X-Relay-Trace-Id is kept, so one trace can span calls)."""

    def __init__(self, app: ASGIApp, relay: Relay, new_id: Callable[[], str]) -> None:
        self.app = app
        self.relay = relay
        self.new_id = new_id

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        request_id = str(state.get("request_id") or self.new_id())
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        trace_id = _trace_id(headers.get(self.relay.trace_id_header)) or self.new_id()
        observation_id = self.new_id()[:16]
        attribution = {name: headers[name] for name in ATTRIBUTION_HEADERS if name in headers}
        state["relay_trace"] = {"trace_id": trace_id, "observation_id": observation_id, **attribution}
        ids = [
            (self.relay.request_id_header.encode(), request_id.encode()),
            (self.relay.trace_id_header.encode(), trace_id.encode()),
            (self.relay.observation_id_header.encode(), observation_id.encode()),
        ]

        async def send_with_ids(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *ids]}
            await send(message)

        await self.app(scope, receive, send_with_ids)
        logger.debug(
            "%s trace=%s observation=%s attribution=%s",
            request_id,
            trace_id,
            observation_id,
            ",".join(sorted(attribution)),
        )


def _trace_id(value: str | None) -> str | None:
    """A client's trace id when it is 8 to 64 characters of hex, letters, digits, `-` or `_`."""
    if value is None:
        return None
    value = value.strip()
    if 8 <= len(value) <= 64 and all(c.isascii() and (c.isalnum() or c in "-_") for c in value):
        return value
    return None
