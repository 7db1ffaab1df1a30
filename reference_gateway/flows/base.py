"""What a flow is to the app: one chat-completions endpoint with a lifetime (a flow may hold state, e.g.
Relay's idempotency store)."""

from __future__ import annotations

from typing import Protocol

from starlette.requests import Request
from starlette.responses import Response

from reference_gateway.services import Services


class Flow(Protocol):
    services: Services  # what the flow serves with; an inbound adapter that bypasses the flow uses it too

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def chat_completions(self, request: Request) -> Response:
        """Answer one request. A `GatewayError` raised here is answered by the app's error layer."""
        ...
