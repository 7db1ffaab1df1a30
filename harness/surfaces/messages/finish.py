"""`finish_reason` for Messages: the answer's `stop_reason` (a stream's from its message_delta)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange
from harness.surfaces.messages import reading as messages
from harness.values import json_equal, short
from harness.violation import Violation, no_response


def check_stop_reason(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("finish_reason", exchange)
    if missing:
        yield missing
        return
    gateway = messages.answer_document(exchange)
    if not isinstance(gateway.document, dict):
        yield Violation(
            "finish_reason", "$", expected, short(exchange.response.raw), gateway.error or "not a Message"
        )
        return
    actual = gateway.document.get("stop_reason")
    if not json_equal(actual, expected):
        yield Violation("finish_reason", "stop_reason", expected, short(actual), "stop_reason differs")
