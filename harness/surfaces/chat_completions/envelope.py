"""The OpenAI error envelope (wire-reference §2.7): where an answer's error document is (the body, or a stream's
`data: {"error": …}` event) and what its shape must be: {"error": {message: str, type: str, param: str|null,
code: str|null}}. Pure."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat
from harness.values import json_type, short
from harness.violation import Violation


def error_document(exchange: Exchange) -> tuple[Any, str] | Violation:
    """The error document and where it was found: the body, or the stream's `data: {"error": …}` event."""
    return reading.error_document(
        exchange, chat.error_payloads, chat.DONE, 'a data: {"error": …} event', "an OpenAI error envelope"
    )


def envelope_violations(document: Any, where: str, check: str = "error") -> Iterator[Violation]:
    """The OpenAI envelope: {"error": {message: str, type: str, param: str|null, code: str|null}}."""
    if not isinstance(document, dict) or not isinstance(document.get("error"), dict):
        flat = isinstance(document, dict) and "message" in document
        yield Violation(
            check,
            where,
            {"error": {"message": "…", "type": "…", "param": None, "code": None}},
            short(document),
            "not an OpenAI error envelope: no `error` object" + (" (a flat error body)" if flat else ""),
        )
        return
    error = document["error"]
    for name in ("message", "type"):
        if not isinstance(error.get(name), str):
            yield Violation(
                check,
                f"{where}.error.{name}",
                "a string",
                short(error.get(name)),
                f"error.{name} is not a string",
            )
    for name in ("param", "code"):
        if name not in error:
            yield Violation(
                check,
                f"{where}.error.{name}",
                "string or null",
                None,
                f"error.{name} is missing (must be present, null allowed)",
            )
        elif error[name] is not None and not isinstance(error[name], str):
            yield Violation(
                check,
                f"{where}.error.{name}",
                "string or null",
                short(error[name]),
                f"error.{name} is a {json_type(error[name])}",
            )
