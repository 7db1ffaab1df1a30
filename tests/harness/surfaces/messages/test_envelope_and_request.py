"""Anthropic's error envelope and the Messages request helpers (harness/surfaces/messages/)."""

from __future__ import annotations

from harness.surfaces.messages.envelope import envelope_violations
from harness.surfaces.messages.request import grow_text, insert_marker


def test_what_the_sdks_read_is_judged_and_the_top_level_type_is_left_to_the_wire_schema() -> None:
    """anthropic-python picks the class by status and reads `error.type` (peer claim P1): an OpenAI-shaped body
    that keeps both raises the right class, so the `error` expectation passes it; the wire schema (the SHOULD rule
    anthropic/errors/envelope-schema) still names the missing top-level `type`."""
    good = {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: x"},
        "request_id": "req_1",
    }
    assert list(envelope_violations(good, "$")) == []
    openai = {
        "error": {"message": "x", "type": "invalid_request_error", "param": None, "code": "model_not_found"}
    }
    assert list(envelope_violations(openai, "$")) == []
    from harness.surfaces.messages.shape import validate

    assert [v.message for v in validate("anthropic.error", openai, check="schema", where="$")]
    assert [v.path for v in envelope_violations({"type": "error", "error": {"type": 400}}, "$")] == [
        "$.error.type",
        "$.error.message",
    ]
    assert "no `error` object" in next(envelope_violations({"message": "flat"}, "$")).message


def test_the_marker_goes_into_the_first_user_turn_not_the_system_prompt() -> None:
    body = {
        "system": "Be terse.",
        "messages": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Hi"}]}],
    }
    marked = insert_marker(body, "[gc:x#1]")
    assert marked["system"] == "Be terse."
    assert marked["messages"][0]["content"][1]["text"] == "[gc:x#1] Hi"
    assert body["messages"][0]["content"][1]["text"] == "Hi"  # the input is not changed
    assert (
        insert_marker({"messages": [{"role": "user", "content": "Hi"}]}, "M")["messages"][0]["content"]
        == "M Hi"
    )
    assert (
        grow_text({"messages": [{"role": "user", "content": "Hi"}]}, "tok")["messages"][0]["content"]
        == "Hi tok"
    )
