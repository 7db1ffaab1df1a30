"""Inbound adapters: one per API a client speaks to the gateway (the harness calls them surfaces), each turning
its requests into a flow's work and the flow's answer back into its own wire format. The flows and the family
adapters below are the same whatever API a request came in on; `app.py` routes every adapter under each of the
profile's base paths.

    base.py              what an inbound adapter is to the app
    chat_completions.py  OpenAI Chat Completions (`POST {base}/chat/completions`): the flows' own vocabulary
    messages.py          Anthropic Messages (`POST {base}/messages`): passed through to Anthropic channels
    responses.py         OpenAI Responses (`POST {base}/responses`): bridged through the flow (responses_bridge.py,
                         its events responses_stream.py; custom tools custom_tools.py, the gateway's own reasoning
                         items reasoning_items.py)
"""

from __future__ import annotations

from reference_gateway.inbound.base import InboundAdapter
from reference_gateway.inbound.chat_completions import ChatCompletions
from reference_gateway.inbound.messages import Messages
from reference_gateway.inbound.responses import Responses

INBOUND: tuple[InboundAdapter, ...] = (ChatCompletions(), Messages(), Responses())

__all__ = ["INBOUND", "InboundAdapter"]
