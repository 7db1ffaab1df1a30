"""Reference gateway: OpenAI Chat Completions served from Anthropic Messages, OpenAI-compatible and Gemini
channels, one profile per documented gateway.

Layout, top down (each layer imports only the ones below it):

    cli.py, app.py   the command line; the app wiring routes, layers and the lifespan (`services.py`)
    inbound/         one adapter per inbound API (Chat Completions), the flows the same behind each
    flows/           the chat and relay flows, their one retry/fallback loop; Relay's store beside its flow
    adapters/        one adapter per provider family (Anthropic, OpenAI-compatible, Gemini)
    web/             the HTTP layer: intake, body limits, the error layer, responses, the SSE loop, endpoints, logs
    settings.py      one gateway's configuration and the seams tests replace; auth.py the client's keys
    upstream/        the only place that talks to providers (pooled client, its network I/O, image downloads)
    translate/       the pure core, per family, with the shared chunk and completion vocabulary apart
    policy/          the per-gateway policy as data: vocabulary, profiles, model catalog, routing
    errors.py, sse.py, fastjson.py, jsonorder.py   the leaves: the error type, the SSE decoder, JSON helpers
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
