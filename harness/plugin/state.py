"""Per-process state of a conformance run, and the stash key the session keeps it under."""

from __future__ import annotations

import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the heavy imports happen only when a conformance run is active
    import httpx

    from harness.engine.ahead import RunAhead
    from harness.engine.target import Target
    from harness.replay.client import ReplayClient
    from harness.spec import Profile


@dataclass
class SessionState:
    """Per-process state of a conformance run."""

    target: Target
    profile: Profile
    rule_patterns: list[str]
    rerun_base: str
    replay_server: Any = None  # harness.replay.ReplayServer when this process serves it
    _http: httpx.Client | None = None
    _replay: ReplayClient | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    expectations: Any = None  # harness.expectations.Expectations
    expectation_problems: list[str] = field(default_factory=list)
    specs_root: Path | None = None  # where the profile's catalog lives (--specs-dir or the bundled specs/)
    workers: int = 1  # rules in flight at once (--concurrency); 1: each runs when pytest reaches it
    ahead: RunAhead | None = None  # the rules running ahead of pytest's loop (harness/plugin/session.py)
    interrupted: str | None = (
        None  # the signal that stopped the run (SIGINT, SIGTERM): its results are partial
    )
    signals: dict[int, Any] = field(
        default_factory=dict
    )  # the handlers before this run's (put back at the end)

    def http(self) -> httpx.Client:
        with _CLIENTS:  # rules running ahead on threads share one client (and its connection pool)
            if self._http is None:
                import httpx

                # No environment proxies: the gateway and the replay upstream are where the user said. Plain
                # http loads no CA bundle.
                verify = not self.target.gateway_url.startswith("http://")
                self._http = httpx.Client(trust_env=False, follow_redirects=False, verify=verify)
            return self._http

    def replay(self) -> ReplayClient | None:
        if self.target.replay_url is None:
            return None
        with _CLIENTS:
            if self._replay is None and self.replay_server is not None:  # served here: called directly
                self._replay = self.replay_server.client()
            elif self._replay is None:
                from harness.replay.client import ReplayClient

                self._replay = ReplayClient(self.target.replay_url)
            return self._replay

    def rerun_command(self, rule_id: str) -> str:
        return f"{self.rerun_base} --rule {shlex.quote(rule_id)}"

    def close(self) -> None:
        if self.signals:
            from harness.orchestrate.processes import restore

            restore(self.signals)
            self.signals = {}
        if self._http is not None:
            self._http.close()
        if self._replay is not None:
            self._replay.close()
        if self.replay_server is not None:
            self.replay_server.stop()


STATE_KEY = pytest.StashKey[SessionState]()
_CLIENTS = threading.Lock()


def is_worker(config: pytest.Config) -> bool:
    """An xdist worker (the controller serves the replay upstream, probes the gateway, prints the plans)."""
    return hasattr(config, "workerinput")
