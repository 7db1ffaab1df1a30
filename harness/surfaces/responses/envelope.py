"""The Responses errors (OpenAI API reference: Error codes; Responses, "Streaming events", the error event): an answer's error
document is OpenAI's envelope in the body, {"error": {message, type, param, code}}, or in a stream the `error`
event, {"type": "error", message, code, param, sequence_number}, which the SDKs raise as an APIError. Pure."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.chat_completions import envelope as openai_envelope
from harness.surfaces.responses import reading as responses
from harness.values import short
from harness.violation import Violation


def error_document(exchange: Exchange) -> tuple[Any, str] | Violation:
    """The error document and where it was found: the body, or the stream's `error` event."""
    return reading.error_document(
        exchange, responses.error_payloads, None, "an `error` event", "an OpenAI error envelope"
    )


def envelope_violations(document: Any, where: str, check: str = "error") -> Iterator[Violation]:
    """The body's OpenAI envelope, or a stream `error` event's own fields (message a string, code and param a
    string or null)."""
    if isinstance(document, dict) and document.get("type") == "error" and "error" not in document:
        if not isinstance(document.get("message"), str):
            yield Violation(check, f"{where}.message", "a string", short(document.get("message")),
                            "the error event's message is not a string")  # fmt: skip
        for name in ("code", "param"):
            value = document.get(name)
            if value is not None and not isinstance(value, str):
                yield Violation(check, f"{where}.{name}", "a string or null", short(value),
                                f"the error event's {name} is neither a string nor null")  # fmt: skip
        return
    yield from openai_envelope.envelope_violations(document, where, check)
