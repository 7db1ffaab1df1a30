"""Sending a plan: the only I/O of the serving path (pacing, pauses, drops; sleeps end when the client leaves)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from harness.errors import DeliberateDrop
from harness.replay.plan import Plan

# Sending a plan (the only I/O of the serving path)


class DisconnectWatch:
    """Completes when the client goes away; sleeps end early then. Starts after the body was read."""

    def __init__(self, receive: Receive) -> None:
        self._task = asyncio.ensure_future(self._watch(receive))

    @staticmethod
    async def _watch(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def sleep(self, seconds: float) -> bool:
        """Sleep; True when the client disconnected meanwhile."""
        if seconds > 0:
            await asyncio.wait([self._task], timeout=seconds)
        return self._task.done()

    def close(self) -> None:
        self._task.cancel()


class PlanResponse(Response):
    def __init__(self, plan: Plan, on_disconnect: Callable[[int], None] | None = None) -> None:
        super().__init__(status_code=plan.status)
        self.plan = plan
        self.on_disconnect = on_disconnect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        plan = self.plan
        watch = DisconnectWatch(receive)
        sent = 0
        try:
            if await watch.sleep(plan.first_byte_delay):
                self._gone(0)
                return
            raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in plan.headers]
            await send({"type": "http.response.start", "status": plan.status, "headers": raw_headers})
            for delay, data in plan.chunks:
                if await watch.sleep(delay):
                    self._gone(sent)
                    return
                if data:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                    sent += len(data)
                    # Yield so small re-cut chunks leave as separate writes rather than one burst.
                    await asyncio.sleep(0)
            if plan.abort:
                raise DeliberateDrop(f"dropped after {sent} bytes")
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watch.close()

    def _gone(self, sent: int) -> None:
        if self.on_disconnect:
            self.on_disconnect(sent)
