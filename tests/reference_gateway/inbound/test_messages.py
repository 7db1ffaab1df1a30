"""The reference gateway's Messages pass-through (reference_gateway/inbound/messages.py): the client's bytes
reach Anthropic with only `model` re-spelt, and the gateway's own refusals are in Anthropic's envelope."""

from __future__ import annotations

import json

import pytest

from reference_gateway.inbound.messages import error_event, error_response, respell_model


def test_only_the_model_value_is_respelt() -> None:
    raw = b'{ "max_tokens" :1024,"model": "anthropic/claude-sonnet-5-5" , "x": 1.50, "messages":[]}'
    assert respell_model(raw, "claude-sonnet-5-5") == (
        b'{ "max_tokens" :1024,"model": "claude-sonnet-5-5" , "x": 1.50, "messages":[]}'
    )


def test_a_nested_model_key_is_not_the_one_respelt() -> None:
    raw = b'{"metadata": {"model": "keep"}, "model": "a"}'
    assert json.loads(respell_model(raw, "b")) == {"metadata": {"model": "keep"}, "model": "b"}
    assert respell_model(b'{"messages": []}', "b") == b'{"messages": []}'


def test_a_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ValueError):
        respell_model(b"[1]", "b")


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "invalid_request_error"), (401, "authentication_error"), (404, "not_found_error"),
     (429, "rate_limit_error"), (529, "overloaded_error"), (502, "api_error")],
)  # fmt: skip
def test_the_gateways_own_errors_are_in_anthropics_envelope(status: int, kind: str) -> None:
    body = json.loads(error_response(status, "why").body)
    assert body == {"type": "error", "error": {"type": kind, "message": "why"}}
    assert error_event(status, "why").startswith(b"event: error\ndata: {")
