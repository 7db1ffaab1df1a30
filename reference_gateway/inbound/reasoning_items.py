"""Reasoning items of this gateway's own making, pure: the provider's reasoning blocks a chat flow returned (the
chat vocabulary's `reasoning_blocks`: Anthropic's signed thinking and redacted_thinking blocks, Gemini's thought
signatures) carried to a Responses client as a `reasoning` item, and opened again when the client sends it back.

A stateless client (`store: false`; Codex, the Agents SDK) keeps the model's reasoning across turns by sending the
reasoning items of an answer back with the next input (Reasoning guide, Encrypted reasoning items), and Anthropic
wants the thinking block of a tool turn back unchanged when thinking is on with tools (extended thinking guide,
Preserving thinking blocks): a bridge that drops it loses the reasoning, or the next turn is refused
(lbjlaq/Antigravity-Manager#3478, router-for-me/CLIProxyAPI#570). The item's `encrypted_content` is opaque to the
client, as OpenAI's is, but not secret: the gateway keeps no key, so it is the blocks encoded (`gcr1.` + base64url of
JSON), which only this gateway opens; the provider guards the blocks themselves (a changed signature is refused).
An item of another maker stays the bridge's to refuse.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from reference_gateway.inbound.opaque import sealed, unsealed

PREFIX = "gcr1."
# The block types a reasoning item carries (what a chat flow returns as `reasoning_blocks`).
KINDS = frozenset({"thinking", "redacted_thinking", "thought_signature"})


def new_id() -> str:
    return f"rs_{secrets.token_hex(24)}"


def summary_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    """The visible thinking of the blocks (redacted thinking and signatures have none)."""
    return "".join(str(b.get("thinking") or "") for b in blocks if b.get("type") == "thinking")


def summary(text: str) -> list[dict[str, Any]]:
    return [{"type": "summary_text", "text": text}] if text else []


def seal(blocks: Sequence[Mapping[str, Any]]) -> str:
    """The `encrypted_content` carrying `blocks`."""
    return sealed(PREFIX, {"blocks": list(blocks)})


def item(blocks: Sequence[Mapping[str, Any]], item_id: str, text: str) -> dict[str, Any]:
    """The reasoning item for `blocks`, its summary `text` (the visible thinking when the client asked for a
    reasoning summary; empty otherwise, as OpenAI's is unless asked). Always its `encrypted_content`: the only place
    the gateway keeps the blocks for a client that sends the item back."""
    return {"type": "reasoning", "id": item_id, "summary": summary(text), "encrypted_content": seal(blocks)}


def opened(given: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The blocks a reasoning item of this gateway carries, or None (another maker's, or not one at all)."""
    data = unsealed(PREFIX, given.get("encrypted_content")) if given.get("type") == "reasoning" else None
    blocks = data.get("blocks") if isinstance(data, dict) else None
    if not isinstance(blocks, list) or not all(
        isinstance(b, dict) and b.get("type") in KINDS for b in blocks
    ):
        return None
    return [dict(b) for b in blocks]


def summarized(body: Mapping[str, Any]) -> bool:
    """The request asks for a reasoning summary (`reasoning.summary`: auto, concise or detailed)."""
    reasoning = body.get("reasoning")
    wanted = reasoning.get("summary") if isinstance(reasoning, Mapping) else None
    return isinstance(wanted, str) and wanted not in ("", "none")
