"""The Responses stream's `error` event in both forms a client meets: flat, as the API reference documents it, and
nested under `error`, as api.openai.com sends it live (vercel/ai#20022, Effect-TS/effect#7262); the replay plays the
live form. An event that carries its message in neither place is a violation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.checks.schemas import validate
from harness.replay.plan import error_event
from harness.surfaces.responses.envelope import envelope_violations

SCHEMA = "openai.response.stream.event"
FLAT = {"type": "error", "code": "server_error", "message": "Overloaded", "param": None, "sequence_number": 6}
NESTED = {
    "type": "error",
    "error": {"type": "server_error", "code": "server_error", "message": "Overloaded", "param": None},
    "sequence_number": 6,
}


@pytest.mark.parametrize("event", [FLAT, NESTED], ids=["flat", "nested"])
def test_either_form_is_an_error_event(event: dict[str, Any]) -> None:
    assert list(validate(SCHEMA, event, check="shape", where="stream[6]")) == []
    assert list(envelope_violations(event, "stream[6]")) == []


@pytest.mark.parametrize(
    "event",
    [
        {"type": "error", "sequence_number": 6},
        {"type": "error", "error": {"code": "server_error"}, "sequence_number": 6},
        {"type": "error", "detail": "Overloaded", "sequence_number": 6},
    ],
    ids=["nothing", "nested-without-message", "elsewhere"],
)
def test_an_error_event_without_its_message_is_a_violation(event: dict[str, Any]) -> None:
    assert list(validate(SCHEMA, event, check="shape", where="stream[6]"))


def test_the_replay_sends_the_live_form() -> None:
    frame = error_event("openai.responses", {"message": "Overloaded"}, 4).decode()
    assert frame.startswith("event: error\ndata: ")
    data = json.loads(frame.split("data: ", 1)[1])
    assert data == {**NESTED, "sequence_number": 4}
