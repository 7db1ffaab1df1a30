"""The provider families' shared words: which endpoint an upstream path is (`anthropic.messages`, `openai.chat`,
`openai.responses`, `gemini.generate`) and the family it belongs to. The checks, the cassettes, the replay upstream and the recorder
all speak them, so they live below all four. Pure."""

from __future__ import annotations

from typing import Literal

EndpointKind = Literal[
    "anthropic.messages", "anthropic.count_tokens", "openai.chat", "openai.responses", "gemini.generate"
]


def endpoint_kind(path: str) -> EndpointKind | None:
    p = path.split("?", 1)[0].rstrip("/")
    if p.endswith("/messages/count_tokens"):
        return "anthropic.count_tokens"
    if p.endswith("/messages"):
        return "anthropic.messages"
    if p.endswith("/chat/completions"):
        return "openai.chat"
    if p.endswith("/responses"):  # OpenAI's Responses API as a provider (create; not /responses/{id})
        return "openai.responses"
    if p.endswith((":generateContent", ":streamGenerateContent")):  # Gemini: /v1beta/models/{model}:...
        return "gemini.generate"
    return None


# A cassette set (`upstream.cassette: {anthropic: …, openai: …, gemini: …, responses: …}`) holds one answer per
# family. `openai` is the OpenAI-compatible Chat Completions wire, `responses` OpenAI's Responses API as an
# upstream (a gateway that passes /v1/responses through, or serves another surface from it): both are OpenAI's,
# but their answers differ, so each has its cassettes.
FAMILIES: tuple[str, ...] = ("anthropic", "openai", "gemini", "responses")
_FAMILY_OF_KIND = {"openai.responses": "responses"}


def endpoint_family(path: str) -> str | None:
    """The provider family an upstream path belongs to: `anthropic`, `openai`, `gemini` or `responses` (None: no
    endpoint)."""
    kind = endpoint_kind(path)
    if kind is None:
        return None
    return _FAMILY_OF_KIND.get(kind, kind.split(".", 1)[0])
