"""What an inbound adapter is to the app: the endpoints it serves under a base path, each answered through the
profile's flow."""

from __future__ import annotations

from typing import Protocol

from starlette.routing import Route

from reference_gateway.flows.base import Flow


class InboundAdapter(Protocol):
    name: str  # the API's name, as the harness's surfaces name it (`chat-completions`)

    def routes(self, base: str, flow: Flow) -> list[Route]:
        """The routes of this API under one base path (`/openai/v1`), answered by `flow`."""
        ...
