"""The control API of a replay upstream served in this process, called directly: what ReplayClient asks over
HTTP (register a case, read its calls, forget it, diagnostics), with the same answers and the same
ReplayError, without a round trip through the server's event loop for each of a rule's three control calls.
The gateway's own traffic still goes over HTTP to the server; only the harness's side is direct."""

from __future__ import annotations

import json
from typing import Any

from harness.errors import ReplayConfigError, ReplayError
from harness.exchange import UpstreamCall
from harness.replay.client import ReplayClient, _calls_of, _plain
from harness.replay.state import ReplayState


class InProcessClient(ReplayClient):
    def __init__(self, state: ReplayState, base_url: str) -> None:  # no HTTP client: nothing to send
        self.base_url = base_url.rstrip("/")
        self._state = state

    def register(self, marker: str, rule_id: str, upstream: Any) -> None:
        # Through JSON, as the HTTP API receives it: the stored plan is plain lists and dicts either way.
        plan = json.loads(json.dumps(_plain(upstream)))
        try:
            self._state.register(marker, rule_id, plan)
        except ReplayConfigError as exc:
            raise ReplayError(f"POST /__gc/cases: HTTP 400: {exc}", 400) from exc

    def calls(self, marker: str) -> tuple[UpstreamCall, ...]:
        return self._calls(marker, self._state.snapshot, "GET /__gc/calls")

    def take(self, marker: str) -> tuple[UpstreamCall, ...]:
        return self._calls(marker, self._state.take, "DELETE /__gc/cases")

    def _calls(self, marker: str, read: Any, what: str) -> tuple[UpstreamCall, ...]:
        try:
            snap = read(marker)
        except ReplayConfigError as exc:
            raise ReplayError(f"{what}: HTTP 400: {exc}", 400) from exc
        if snap is None:
            raise ReplayError(f"{what}: HTTP 404: unknown marker {marker}", 404)
        return _calls_of(snap, marker)

    def forget(self, marker: str | None = None) -> None:
        try:
            self._state.forget(marker)
        except ReplayConfigError as exc:
            raise ReplayError(f"DELETE /__gc/cases: HTTP 400: {exc}", 400) from exc

    def diagnostics(self) -> list[dict[str, Any]]:
        return [dict(d) for d in self._state.diagnostics()]

    def clear_diagnostics(self) -> None:
        self._state.clear_diagnostics()

    def fetches(self) -> list[dict[str, Any]]:
        return [dict(f) for f in self._state.fetches()]

    def health(self) -> bool:
        return True

    def close(self) -> None:
        pass


__all__ = ["InProcessClient"]
