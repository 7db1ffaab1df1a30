"""A Messages request as rules are rendered into it: the case marker at the start of the first user message's
text, that text grown to pad a body, a rule's variant merged in. Pure: inputs are never changed.

Messages content is a string or a list of blocks; `system` is a top-level field (not a message), so the marker
always goes into the first user turn, which every Messages request has (the API requires the first message to be
a user turn)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from harness.surfaces.reading import grow_content, mark_content


def _first_user(body: dict[str, Any]) -> dict[str, Any] | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    return next((m for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)


def insert_marker(body: Any, marker: str) -> Any:
    """The marker at the start of the first user message's text: a string content is prefixed; in a block list
    the first text block is, or a text block is appended (earlier block indexes stay as they are)."""
    if not isinstance(body, Mapping):
        return body
    out = copy.deepcopy(dict(body))
    message = _first_user(out)
    if message is not None:
        mark_content(message, marker)
    return out


def grow_text(body: Any, token: str) -> Any:
    """A copy of the body with " token" appended to the first user message's text (string or first text block)."""
    out = copy.deepcopy(dict(body))
    message = _first_user(out)
    if message is not None and grow_content(message, token):
        return out
    raise ValueError("pad_to_bytes needs a user message with text to grow")


def apply_variant(body: Mapping[str, Any], variant: Mapping[str, Any]) -> dict[str, Any]:
    """The body with the variant's keys (Messages has no stream-only fields to drop)."""
    return {**body, **variant}
