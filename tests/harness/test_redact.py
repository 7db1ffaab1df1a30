"""Redaction of an upstream call (harness/redact.py): the user's key becomes <GATEWAY_KEY>, every other credential
the gateway sent becomes <UPSTREAM_KEY>, in its header and wherever else it appears in the call."""

from __future__ import annotations

import json

from harness.exchange import UpstreamCall
from harness.redact import redact_call


def call(headers: dict[str, str], body: object, query: str = "") -> UpstreamCall:
    raw = json.dumps(body).encode()
    return UpstreamCall("POST", "/v1/messages", headers, raw, json.loads(raw), query=query)


def test_the_gateways_own_keys_are_redacted_everywhere_in_the_call() -> None:
    got = redact_call(
        call(
            {
                "authorization": "Bearer sk-own-123",
                "x-goog-api-key": "AIza-own",
                "content-type": "application/json",
            },
            {"note": "sk-own-123 echoed"},
            query="alt=sse&key=AIza-query",
        ),
        "gc-user",
    )
    assert got.headers["authorization"] == "Bearer <UPSTREAM_KEY>"
    assert got.headers["x-goog-api-key"] == "<UPSTREAM_KEY>"
    assert got.headers["content-type"] == "application/json"
    assert got.json == {"note": "<UPSTREAM_KEY> echoed"}
    assert got.query == "alt=sse&key=<UPSTREAM_KEY>"


def test_a_leaked_user_key_stays_visible_as_such() -> None:
    got = redact_call(
        call({"x-api-key": "gc-user", "authorization": "Bearer gc-user"}, {"k": "gc-user"}), "gc-user"
    )
    assert got.headers == {"x-api-key": "<GATEWAY_KEY>", "authorization": "Bearer <GATEWAY_KEY>"}
    assert got.json == {"k": "<GATEWAY_KEY>"}


def test_a_call_without_credentials_is_unchanged() -> None:
    original = call({"content-type": "application/json"}, {"a": 1})
    assert redact_call(original, "gc-user") is original
