"""`finish_reason`: the answer's `choices[0].finish_reason` (assembled for a stream) is the one expected. Pure."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange
from harness.surfaces.chat_completions import reading as chat
from harness.values import json_equal, short
from harness.violation import Violation, no_response


def check_finish_reason(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("finish_reason", exchange)
    if missing:
        yield missing
        return
    gateway = chat.answer_document(exchange)
    if gateway.error is not None:
        yield Violation("finish_reason", "$", expected, short(exchange.response.raw), gateway.error)
        return
    choice = chat.first_choice(gateway.document)
    if not isinstance(choice, dict):
        yield Violation("finish_reason", "choices[0]", expected, None, "the answer has no choices[0]")
        return
    actual = choice.get("finish_reason")
    if not json_equal(actual, expected):
        note = (
            "" if actual in chat.FINISH_REASONS or actual is None else " (not an OpenAI finish_reason at all)"
        )
        yield Violation(
            "finish_reason", "choices[0].finish_reason", expected, actual, f"finish_reason {actual!r}{note}"
        )
