"""`finish_reason` for Responses: how the response ended, as `status` (`completed`, `incomplete`, `failed`) or, for
an incomplete one, `status/reason` (`incomplete/max_output_tokens`, `incomplete/content_filter`): the body's, or
a stream's terminal response."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.responses import reading as responses
from harness.values import json_equal, short
from harness.violation import Violation, no_response


def ending(document: Any) -> str | None:
    response = reading.as_object(document)
    status = response.get("status")
    if not isinstance(status, str):
        return None
    reason = reading.as_object(response.get("incomplete_details")).get("reason")
    return f"{status}/{reason}" if status == "incomplete" and isinstance(reason, str) else status


def check_finish(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    missing = no_response("finish_reason", exchange)
    if missing:
        yield missing
        return
    gateway = responses.answer_document(exchange)
    if not isinstance(gateway.document, dict) or not gateway.document:
        yield Violation(
            "finish_reason", "$", expected, short(exchange.response.raw), gateway.error or "no Response"
        )
        return
    actual = ending(gateway.document)
    options = expected if isinstance(expected, list) else [expected]
    if not any(json_equal(actual, option) for option in options):
        yield Violation("finish_reason", "status", expected, actual, "the response ended otherwise")
