"""The gateway's answer as one JSON document, as the run's surface reads it: the body, or the stream assembled
into the answer a client accumulates (harness/surfaces/). Pure."""

from __future__ import annotations

from harness.exchange import Exchange
from harness.surfaces import reading, surface_of
from harness.surfaces.reading import GatewayAnswer, StreamView


def gateway_answer(exchange: Exchange) -> GatewayAnswer:
    surface = surface_of(exchange)
    return reading.answer(exchange, surface.assemble, surface.sentinel)


def stream_of(exchange: Exchange) -> StreamView:
    """The answer's SSE events, decoded with the surface's sentinel."""
    return reading.stream_view(exchange.response.raw, surface_of(exchange).sentinel)


__all__ = ["GatewayAnswer", "gateway_answer", "stream_of"]
