"""OpenAI Chat Completions in: the flows speak it already (their requests are chat bodies, their answers
completions and chunk streams), so this adapter routes `POST {base}/chat/completions` straight to the flow."""

from __future__ import annotations

from starlette.routing import Route

from reference_gateway.flows.base import Flow


class ChatCompletions:
    name = "chat-completions"

    def routes(self, base: str, flow: Flow) -> list[Route]:
        return [Route(f"{base}/chat/completions", flow.chat_completions, methods=["POST"])]
