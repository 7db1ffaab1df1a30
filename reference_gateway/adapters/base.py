"""What every family adapter has in common: the call it serves, the request it prepares, the answer it returns,
the stream it opens, and the endpoint it addresses (its path and the gateway's own key for the family)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from reference_gateway.policy.models import Channel, ModelInfo
from reference_gateway.policy.models import Protocol as Family
from reference_gateway.services import Services
from reference_gateway.translate.chunks import ChunkSource
from reference_gateway.upstream.client import Endpoint, Reply, UpstreamSettings

# The ASGI scope key an inbound bridge sets on the chat request it has the flow serve when it carries the provider's
# reasoning in its own API (a Responses reasoning item): the flow then returns the reasoning blocks (Anthropic's
# signed thinking, Gemini's thought signatures) as `reasoning_blocks`, and sends those of the history back, whatever
# the profile shows chat clients. Never a header or a body field: no client can ask for it.
CARRY_REASONING = "reference_gateway.carry_reasoning"


@dataclass(frozen=True)
class Call:
    """One attempt at one channel: the client's body and headers, the model, the channel, the gateway's request
    id and the answer's `created` time; `carry_reasoning`: the request came from a bridge that carries the
    provider's reasoning (CARRY_REASONING)."""

    body: Mapping[str, Any]
    headers: Mapping[str, str]
    model: ModelInfo
    channel: Channel
    request_id: str
    created: int
    carry_reasoning: bool = False

    @property
    def completion_id(self) -> str:
        # EZAT: the completion id is `chatcmpl-` and the request id.
        return f"chatcmpl-{self.request_id}"


@dataclass(frozen=True)
class Prepared:
    """A call translated for its family: the upstream body and the extra upstream headers, whether it streams,
    and whether the stream translator makes the usage chunk."""

    call: Call
    body: Mapping[str, Any]
    stream: bool
    include_usage: bool
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderAnswer:
    """A non-streaming answer: a completion the gateway made from the family's answer, or the provider's own
    answer passed on as it came (`passed`)."""

    completion: Mapping[str, Any] | None = None
    passed: Reply | None = None

    @property
    def usage(self) -> Any:
        """The answer's OpenAI-shaped usage (whatever the provider sent, for a passed answer)."""
        if self.passed is not None:
            return self.passed.answer.get("usage")
        return (self.completion or {}).get("usage")


@dataclass(frozen=True)
class OpenedStream:
    """A provider stream, not yet entered (entering it sends the request), and the translator of its events."""

    context: AbstractAsyncContextManager[AsyncIterator[Any]]
    source: ChunkSource


class FamilyAdapter(ABC):
    """One provider family: its request translation, its answer and stream translation and the errors its
    answers can carry (an error inside a 200, an answer that is not the family's), and where a call goes."""

    family: Family

    @abstractmethod
    def path(self, channel: Channel, *, stream: bool) -> str: ...

    @abstractmethod
    def auth_headers(self, settings: UpstreamSettings) -> dict[str, str]:
        """The gateway's own key for the family (the client's key is never forwarded)."""

    @abstractmethod
    async def prepare(self, call: Call, services: Services) -> Prepared:
        """The request in the family's terms (remote images downloaded where the family needs their bytes);
        raises `GatewayError` for anything refused, before anything goes upstream."""

    @abstractmethod
    async def complete(self, prepared: Prepared, services: Services) -> ProviderAnswer: ...

    @abstractmethod
    def open_stream(self, prepared: Prepared, services: Services) -> OpenedStream: ...

    def endpoint(self, prepared: Prepared, services: Services) -> Endpoint:
        channel = prepared.call.channel
        headers = {**prepared.headers, **self.auth_headers(services.settings.upstream)}
        return Endpoint(self.family, self.path(channel, stream=prepared.stream), headers)

    async def send(self, prepared: Prepared, services: Services) -> Reply:
        """The non-streaming call, to this family's endpoint."""
        call = prepared.call
        return await services.upstream.call(
            self.endpoint(prepared, services), prepared.body, request_id=call.request_id, model=call.model.id
        )

    def events(
        self, prepared: Prepared, services: Services, *, decoded: bool = True
    ) -> AbstractAsyncContextManager[AsyncIterator[Any]]:
        """The streaming call, not yet entered: its events decoded as JSON objects, or as they came."""
        call = prepared.call
        endpoint = self.endpoint(prepared, services)
        opener = services.upstream.stream if decoded else services.upstream.stream_raw
        return opener(endpoint, prepared.body, request_id=call.request_id, model=call.model.id)
