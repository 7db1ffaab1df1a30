"""Anthropic's error envelope (docs/wire-reference.md §1.8; Anthropic API reference, "Errors"): where an answer's
error is (the body, or a stream's `event: error`) and its shape, `{"type": "error", "error": {"type": str,
"message": str}}`; `request_id` beside `error` is allowed (the API adds it). The `error` expectation judges what the
SDKs read (`error.type`, `error.message`: the class comes from the status); the top-level `type: "error"`, which no SDK
reads, is the wire schema's (rule anthropic/errors/envelope-schema, a SHOULD). Pure."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.messages import reading as messages
from harness.values import short
from harness.violation import Violation

SHAPE = {"type": "error", "error": {"type": "…", "message": "…"}}


def error_document(exchange: Exchange) -> tuple[Any, str] | Violation:
    """The error document and where it was found: the body, or the stream's `event: error`."""
    return reading.error_document(
        exchange, messages.error_payloads, None, "an `event: error` event", "an Anthropic error envelope"
    )


def envelope_violations(document: Any, where: str, check: str = "error") -> Iterator[Violation]:
    if not isinstance(document, dict) or not isinstance(document.get("error"), dict):
        flat = isinstance(document, dict) and "message" in document
        yield Violation(check, where, SHAPE, short(document), "not an Anthropic error envelope: no `error` object"
                        + (" (a flat error body)" if flat else ""))  # fmt: skip
        return
    error = document["error"]
    for name in ("type", "message"):
        if not isinstance(error.get(name), str):
            yield Violation(check, f"{where}.error.{name}", "a string", short(error.get(name)),
                            f"error.{name} is not a string")  # fmt: skip
