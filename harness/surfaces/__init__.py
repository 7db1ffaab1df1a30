"""Inbound surfaces: the APIs a client speaks to a gateway, each one object (harness/surfaces/base.py) that the
engine, the checks, preflight, live mode, fuzz and the clients read instead of assuming one API.

    base.py              the Surface: endpoint, request shaping, schemas, stream grammar, errors, own checks
    reading.py           what every surface's answers share: JSON, SSE payloads, the answer document
    chat_completions/    OpenAI Chat Completions (`surface: chat-completions`, the default)
    messages/            Anthropic Messages (`surface: messages`)
    responses/           OpenAI Responses (`surface: responses`)

A profile names its surface in profile.yaml. A name that is not built in is `module:attribute`, imported: a
surface of your own (a gateway's in-house API, a test's tiny fake) needs no change to the harness.
"""

from __future__ import annotations

import importlib
from functools import cache

from harness.errors import ConfigError
from harness.exchange import Exchange
from harness.surfaces import chat_completions, messages, responses
from harness.surfaces.base import Surface

DEFAULT = "chat-completions"
BUILT_IN: dict[str, Surface] = {
    s.name: s for s in (chat_completions.SURFACE, messages.SURFACE, responses.SURFACE)
}


@cache
def surface(name: str) -> Surface:
    """The surface a profile names: a built-in one, or `module:attribute` (a Surface) imported."""
    if name in BUILT_IN:
        return BUILT_IN[name]
    module_name, _, attribute = name.partition(":")
    if not attribute:
        known = ", ".join(sorted(BUILT_IN))
        raise ConfigError(
            f"unknown surface {name!r}: the built-in ones are {known}, or name one as module:attribute"
        )
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"surface {name!r} cannot be imported: {exc}") from exc
    if not isinstance(found, Surface):
        raise ConfigError(f"surface {name!r} is a {type(found).__name__}, not a harness Surface")
    return found


def surface_of(exchange: Exchange) -> Surface:
    """The surface an exchange was made with (the run's profile's)."""
    return surface(exchange.surface)


__all__ = ["BUILT_IN", "DEFAULT", "Surface", "surface", "surface_of"]
