"""The request flows, peers behind one small interface (`Flow`): the chat flow (EZAT, LYRouter) and the relay
flow (Relay); the profile's data chooses (a profile with Relay's policy runs the relay flow)."""

from __future__ import annotations

from reference_gateway.flows.base import Flow
from reference_gateway.flows.chat import ChatFlow
from reference_gateway.flows.relay import RelayFlow
from reference_gateway.services import Services

__all__ = ["ChatFlow", "Flow", "RelayFlow", "flow_for"]


def flow_for(services: Services) -> Flow:
    relay = services.profile.relay
    return ChatFlow(services) if relay is None else RelayFlow(services, relay)
