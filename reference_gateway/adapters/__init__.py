"""One adapter per provider family, chosen by the channel's `protocol` (data, from the catalog): each owns its
family's request translation, answer and stream translation and answer errors, and where a call goes."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from reference_gateway.adapters.anthropic import AnthropicAdapter
from reference_gateway.adapters.base import (
    CARRY_REASONING,
    Call,
    FamilyAdapter,
    OpenedStream,
    Prepared,
    ProviderAnswer,
)
from reference_gateway.adapters.gemini import GeminiAdapter
from reference_gateway.adapters.openai import OpenAIAdapter
from reference_gateway.policy.models import Channel
from reference_gateway.policy.models import Protocol as Family

__all__ = [
    "ADAPTERS",
    "CARRY_REASONING",
    "Call",
    "FamilyAdapter",
    "OpenedStream",
    "Prepared",
    "ProviderAnswer",
    "adapter_for",
]

ADAPTERS: Mapping[Family, FamilyAdapter] = MappingProxyType(
    {adapter.family: adapter for adapter in (AnthropicAdapter(), OpenAIAdapter(), GeminiAdapter())}
)


def adapter_for(channel: Channel) -> FamilyAdapter:
    return ADAPTERS[channel.protocol]
