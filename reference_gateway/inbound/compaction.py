"""Compaction's items, pure (OpenAI API reference: Responses > Compact a response; Compaction guide; Open Responses
specification, "WebSocket Compaction"): the compacted window `POST {base}/responses/compact` answers, and a
compaction item of this gateway's opened again when a client sends the window back as `input`.

The window keeps every user message of the conversation as it was sent and replaces the rest (the assistant's
answers, its calls and their outputs) with one `compaction` item carrying a summary the model wrote. The item's
`encrypted_content` is opaque to the client, as OpenAI's is, but not secret: the gateway keeps no key, so it is
the summary encoded (`gcc1.` + base64url of JSON), which only this gateway opens. An item of another maker (the
provider's own) is left to the provider: the native path passes it on, the bridge refuses it.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from reference_gateway.inbound.opaque import sealed, unsealed

PREFIX = "gcc1."
# What the model is asked to write when a conversation is compacted (the last user message of the compaction call,
# after the conversation itself).
SUMMARY_PROMPT = (
    "You are compacting a conversation so that it can continue in a smaller context. Write a concise summary of "
    "the conversation so far that keeps every fact, decision, constraint, open question and tool result a "
    "continuation needs. Answer with the summary only; do not answer the conversation itself."
)
# How an opened compaction item reads to the model: the summary as the assistant's own earlier turn.
SUMMARY_HEADING = "Summary of the conversation so far:\n"


def seal(summary: str) -> dict[str, Any]:
    """A compaction item carrying `summary`."""
    content = sealed(PREFIX, {"summary": summary})
    return {"type": "compaction", "id": f"cmp_{secrets.token_hex(24)}", "encrypted_content": content}


def opened(item: Mapping[str, Any]) -> str | None:
    """The summary a compaction item of this gateway carries, or None (another maker's, or not one at all)."""
    data = unsealed(PREFIX, item.get("encrypted_content")) if item.get("type") == "compaction" else None
    summary = data.get("summary") if isinstance(data, dict) else None
    return summary if isinstance(summary, str) else None


def is_ours(item: Any) -> bool:
    return isinstance(item, Mapping) and opened(item) is not None


def as_message(summary: str) -> dict[str, Any]:
    """An opened compaction item as an input message (the Responses form; the bridge words it as chat)."""
    return {"type": "message", "role": "assistant", "content": SUMMARY_HEADING + summary}


def expanded(items: Sequence[Any]) -> list[Any]:
    """Input items with each compaction item of this gateway opened into its summary message."""
    out: list[Any] = []
    for item in items:
        summary = opened(item) if isinstance(item, Mapping) else None
        out.append(as_message(summary) if summary is not None else item)
    return out


def user_messages(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The user messages of a conversation's items as the window keeps them: message items with their text as
    `input_text` parts (a string content as one part), each with an id and status, as OpenAI lists them."""
    kept: list[dict[str, Any]] = []
    for item in items:
        if (
            not isinstance(item, Mapping)
            or item.get("type", "message") != "message"
            or item.get("role") != "user"
        ):
            continue
        content = item.get("content")
        parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else list(content or [])
        kept.append({"type": "message", "id": f"msg_{secrets.token_hex(24)}", "status": "completed",
                     "role": "user", "content": parts})  # fmt: skip
    return kept


def window(items: Sequence[Any], summary: str) -> list[dict[str, Any]]:
    """The compacted window: the conversation's user messages as they were, then one compaction item."""
    return [*user_messages(items), seal(summary)]
