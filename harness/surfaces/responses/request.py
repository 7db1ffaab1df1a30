"""A Responses request as rules are rendered into it: the case marker at the start of the first user input's
text, that text grown to pad a body, a rule's variant merged in. Pure: inputs are never changed.

`input` is a string (one user message) or a list of items; `instructions` is a top-level field, so the marker goes
into the user's input: the string itself, or the first user message item (its string content, or its first
`input_text` part)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def _first_user(items: list[Any]) -> dict[str, Any] | None:
    return next(
        (
            item
            for item in items
            if isinstance(item, dict)
            and item.get("role") == "user"
            and item.get("type", "message") == "message"
        ),
        None,
    )


def _edit_text(message: dict[str, Any], edit: Any) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = edit(content)
        return True
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "input_text" and isinstance(part.get("text"), str):
            part["text"] = edit(part["text"])
            return True
    return False


def insert_marker(body: Any, marker: str) -> Any:
    """The marker at the start of the user's input (a copy; the input is not changed)."""
    if not isinstance(body, Mapping):
        return body
    out = copy.deepcopy(dict(body))
    given = out.get("input")
    if isinstance(given, str):
        out["input"] = f"{marker} {given}" if given else marker
    elif isinstance(given, list):
        message = _first_user(given)
        if message is not None and not _edit_text(
            message, lambda text: f"{marker} {text}" if text else marker
        ):
            content = message.get("content")
            if isinstance(content, list):
                content.append({"type": "input_text", "text": marker})
    return out


def grow_text(body: Any, token: str) -> Any:
    """A copy of the body with " token" appended to the user's input text."""
    out = copy.deepcopy(dict(body))
    given = out.get("input")
    if isinstance(given, str):
        out["input"] = f"{given} {token}"
        return out
    message = _first_user(given) if isinstance(given, list) else None
    if message is not None and _edit_text(message, lambda text: f"{text} {token}"):
        return out
    raise ValueError("pad_to_bytes needs user input text to grow")


def apply_variant(body: Mapping[str, Any], variant: Mapping[str, Any]) -> dict[str, Any]:
    """The body with the variant's keys; a non-stream variant drops `stream_options` (it is only for streams)."""
    out = {**body, **variant}
    if variant.get("stream") is False:
        out.pop("stream_options", None)
    return out
