"""A Chat Completions request as rules are rendered into it: the case marker at the start of the first user
message's text, that text grown to pad a body, a rule's variant merged in. Pure: inputs are never changed."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from harness.surfaces.reading import grow_content, mark_content


def insert_marker(body: Any, marker: str) -> Any:
    """Put the marker at the start of the first user message's text (a copy; the input is not changed).

    No user text: a text part is appended to the first user message (earlier part indexes stay as
    they are); no user message: the first message's text; no messages at all: nothing.
    """
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return body
    out = copy.deepcopy(dict(body))
    messages = out["messages"]
    index = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), 0)
    message = messages[index]
    if isinstance(message, dict):
        mark_content(message, marker)
    return out


def grow_text(body: Any, token: str) -> Any:
    """A copy of the body with " token" appended to the first user message's text (string or first text part)."""
    out = copy.deepcopy(dict(body))
    for message in out.get("messages", []):
        if isinstance(message, dict) and message.get("role") == "user" and grow_content(message, token):
            return out
    raise ValueError("pad_to_bytes needs a user message with text to grow")


def apply_variant(body: Mapping[str, Any], variant: Mapping[str, Any]) -> dict[str, Any]:
    """The body with the variant's keys; a non-stream variant drops `stream_options` (it is only for streams)."""
    out = {**body, **variant}
    if variant.get("stream") is False:
        out.pop("stream_options", None)
    return out
