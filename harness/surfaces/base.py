"""An inbound surface: one API a client speaks to the gateway (OpenAI Chat Completions, Anthropic Messages, OpenAI
Responses), as one object the whole harness reads. Data plus the few functions that differ from one API to the
next; nothing else in the harness branches on which API it judges.

A surface says:
- where it is: its endpoint under the base URL, and an example base URL for messages;
- how a request carries the case marker, grows to a size, and takes a rule's variant;
- its answers: the wire schemas of an answer, a stream payload and an error; the stream's grammar (a sentinel
  such as `[DONE]`, or named events) and the answer a client assembles from a stream;
- its errors: where the error document of an answer is, and what its envelope must look like;
- the check kinds whose meaning is the surface's own (`stream_order` is the chunk state machine of Chat
  Completions and the event grammar of Messages; `finish_reason`, `shape`, the live forms), keyed by name;
- how a live request is bounded (the fields that cap the output), and which client libraries speak it;
- the transports it is also spoken over beside one HTTP request per answer (Responses' WebSocket mode): a variant
  of the surface, not another one — the same requests and events, carried otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.exchange import Exchange
from harness.surfaces.reading import Payload, StreamView
from harness.violation import Check, Violation


@dataclass(frozen=True)
class Transport:
    """A way a surface's API is spoken other than one HTTP request per answer (OpenAI Responses over a WebSocket):
    the engine opens it (harness/engine/socket.py) and fills the same exchange the HTTP path fills, so the surface's
    checks read its answers unchanged. What differs is data: the message a request body becomes, the message that
    ends a turn, and the wire schema of a payload that only this transport sends (its in-band error event)."""

    name: str  # as a rule names it: `request: {transport: websocket}`
    # A request body as the message that starts a turn.
    client_event: Callable[[Mapping[str, Any]], dict[str, Any]]
    # Whether a received message (its decoded JSON, or its text) ends the turn.
    ends_turn: Callable[[Any], bool]
    # A payload's wire schema where this transport's differs from the surface's (None: the surface's own).
    payload_schema: Callable[[Payload], str | None] = lambda _payload: None
    # The envelope of an error document that came over this transport (its in-band error event), or None: the
    # surface's own envelope judges it.
    envelope: Callable[[Any, str, str], Iterator[Violation]] | None = None


@dataclass(frozen=True)
class Surface:
    name: str  # as a profile names it: `surface: chat-completions`
    title: str  # "OpenAI Chat Completions"
    label: str  # how a sentence names its endpoint: "no chat completions endpoint at this URL"
    endpoint: str  # POST path relative to the base URL (`chat/completions`)
    base_url_example: str  # a base URL as its SDKs take it, for messages (`http://127.0.0.1:8080/v1`)
    sentinel: str | None  # the stream's last data line (`[DONE]`), None when it has none
    # Wire schemas (specs/schema/wire/<name>.schema.json): a served answer, an error body, a stream payload.
    answer_schema: str
    error_schema: str
    payload_schema: Callable[[Payload], str]
    # The answer a client assembles from a stream (what `json` expectations read for a streamed variant).
    assemble: Callable[[StreamView], Any]
    # The error document of an exchange and where it was found (the body, or the stream's error event), or a
    # violation saying there is none; then the violations of its envelope's shape.
    error_document: Callable[[Exchange], tuple[Any, str] | Violation]
    envelope: Callable[[Any, str, str], Iterator[Violation]]
    # The request: the case marker put into the user's text, the text grown to a byte size, a variant applied.
    insert_marker: Callable[[Any, str], Any]
    grow_text: Callable[[Any, str], Any]  # (body, token) -> a copy with " token" appended to the user's text
    apply_variant: Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]
    # Headers every request of this surface carries, as its SDKs send them (a rule may override or remove one).
    request_headers: Mapping[str, str] = field(default_factory=dict)
    # Check kinds whose meaning is this surface's own; the rest are the harness's generic ones.
    checks: Mapping[str, Check] = field(default_factory=dict)
    # The generic answer check every 2xx answer gets, unless the rule names its own schema or error.
    implicit_checks: Sequence[str] = ()
    # Live mode: the request fields that cap the output, the first of them the one to set.
    output_limit_fields: Sequence[str] = ("max_tokens",)
    # Client libraries that speak this surface (harness/clients/).
    clients: Sequence[str] = ()
    # The request schema fuzz generates valid bodies from (specs/schema/wire), when it fuzzes this surface.
    fuzz_request_schema: str | None = None
    # Whether a stream payload carries the answer itself (a text or arguments delta) rather than its framing: the
    # events `streamed` times.
    content_event: Callable[[Any], bool] = lambda _data: False
    # The transports beside HTTP this surface is also spoken over, by name (`websocket`).
    transports: Mapping[str, Transport] = field(default_factory=dict)
    # The smallest valid request but its model: what certify's wiring probe sends (a short "Say hello.").
    hello: Mapping[str, Any] = field(
        default_factory=lambda: {"messages": [{"role": "user", "content": "Say hello."}]}
    )

    def check(self, kind: str) -> Check | None:
        return self.checks.get(kind)

    def envelope_of(self, transport: str = "http") -> Callable[[Any, str, str], Iterator[Violation]]:
        """The envelope check of an error document that came over `transport`."""
        over = self.transports.get(transport)
        return over.envelope if over is not None and over.envelope is not None else self.envelope

    def payload_schema_of(self, payload: Payload, transport: str = "http") -> str:
        """A stream payload's wire schema as it arrived over `transport` (a transport's own payload, else the
        surface's)."""
        over = self.transports.get(transport)
        return (over.payload_schema(payload) if over is not None else None) or self.payload_schema(payload)
