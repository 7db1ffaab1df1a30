"""The provider families' shared words: which endpoint an upstream path is (`anthropic.messages`, `openai.chat`,
`gemini.generate`) and the family it belongs to. The checks, the cassettes, the replay upstream and the recorder
all speak them, so they live below all four. Pure."""

from __future__ import annotations

from typing import Literal

EndpointKind = Literal["anthropic.messages", "anthropic.count_tokens", "openai.chat", "gemini.generate"]


def endpoint_kind(path: str) -> EndpointKind | None:
    p = path.split("?", 1)[0].rstrip("/")
    if p.endswith("/messages/count_tokens"):
        return "anthropic.count_tokens"
    if p.endswith("/messages"):
        return "anthropic.messages"
    if p.endswith("/chat/completions"):
        return "openai.chat"
    if p.endswith((":generateContent", ":streamGenerateContent")):  # Gemini: /v1beta/models/{model}:...
        return "gemini.generate"
    return None


# A cassette set (`upstream.cassette: {anthropic: …, openai: …, gemini: …}`) holds one answer per family.
FAMILIES: tuple[str, ...] = ("anthropic", "openai", "gemini")


def endpoint_family(path: str) -> str | None:
    """The provider family an upstream path belongs to: `anthropic`, `openai` or `gemini` (None: no endpoint)."""
    kind = endpoint_kind(path)
    return kind.split(".", 1)[0] if kind else None
