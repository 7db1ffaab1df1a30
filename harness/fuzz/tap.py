"""The upstream tap: the replay upstream (as certify serves it) behind ASGI middleware that remembers every
request body the gateway sent upstream, so fuzz can judge that nothing invalid or refused reached the provider."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from harness.cassette.bodies import receive_body


class UpstreamTap:
    """ASGI middleware in front of the replay upstream's app: remembers every request body it receives."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._bodies: list[bytes] = []
        self.enabled = True  # certify keeps the tap off while the catalog runs

    def take(self) -> list[bytes]:
        with self._lock:
            bodies, self._bodies = self._bodies, []
        return bodies

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.enabled or scope["type"] != "http" or scope.get("path", "").startswith("/__gc/"):
            await self.app(scope, receive, send)
            return
        body = await receive_body(receive)
        with self._lock:
            self._bodies.append(body)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


@contextlib.contextmanager
def tapped_replay(port: int = 0) -> Iterator[tuple[str, UpstreamTap]]:
    """The replay upstream (as certify serves it) behind an `UpstreamTap`."""
    from harness.paths import cassettes_dir
    from harness.replay.server import ReplayServer

    server = ReplayServer(cassettes_dir(), port=port)
    tap = UpstreamTap(server.app)
    server.app = tap  # type: ignore[assignment]  # start() serves `app`, any ASGI app
    server.start()
    try:
        yield server.url, tap
    finally:
        server.stop()
