"""The chat completion chunk stream the gateway sends, shared by every family's stream translator (pure): the
chunk's wire types, what a stream item is (a chunk, an error, `[DONE]`, or bytes passed through), the `Pump`
interface each translator implements, and how an item is written as one SSE event."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypedDict, TypeVar

from reference_gateway import fastjson
from reference_gateway.errors import ErrorEnvelope, GatewayError
from reference_gateway.policy.vocabulary import FinishReason, Profile
from reference_gateway.translate.completion import Usage

DONE: Final = "[DONE]"
PING: Final = b": ping\n\n"


class Delta(TypedDict, total=False):
    role: Literal["assistant"]
    content: str
    reasoning_content: str  # LYRouter: "the thinking process is in delta.reasoning_content"
    # The provider's reasoning blocks, each whole once it is complete (a signed thinking block; a Gemini thought
    # signature): only for a bridge that asked for them (StreamContext.carry_reasoning).
    reasoning_blocks: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]


class ChunkChoice(TypedDict):
    index: int
    delta: Delta
    logprobs: None
    finish_reason: FinishReason | None


class _ChunkBase(TypedDict):
    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice]


class Chunk(_ChunkBase, total=False):
    usage: Usage | None


# A chunk, an error, the end; or an upstream event's bytes passed through as they came.
StreamItem = Chunk | ErrorEnvelope | Mapping[str, Any] | Literal["[DONE]"] | bytes

T = TypeVar("T")


class Pump(Protocol[T]):
    """A stream translator: fed one upstream event at a time, it returns what to send for it; `fail` and
    `end_of_stream` end the stream (an error event, or the end the upstream's close means)."""

    @property
    def finished(self) -> bool: ...

    def feed(self, event: Any) -> list[T]: ...

    def fail(self, error: GatewayError) -> list[T]: ...

    def end_of_stream(self) -> list[T]: ...


# A family's stream translator (Anthropic, OpenAI-compatible, Gemini): stream items out.
ChunkSource = Pump[StreamItem]


def encode(item: StreamItem) -> bytes:
    """One SSE event: only `data:` lines, as the OpenAI SDKs expect (no `event:`/`id:` fields)."""
    if isinstance(item, bytes):
        return item  # already an event
    if item == DONE:
        return b"data: [DONE]\n\n"
    return b"data: " + fastjson.dumps(item) + b"\n\n"


@dataclass(frozen=True)
class StreamContext:
    completion_id: str
    created: int
    model: str  # EZAT: "`model` is exactly the name you sent"
    include_usage: bool
    profile: Profile
    # An inbound bridge asked for the provider's reasoning (thinking text and signed blocks) whatever the profile
    # shows chat clients: it carries them in its own API (a Responses reasoning item).
    carry_reasoning: bool = False
