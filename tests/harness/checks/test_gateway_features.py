"""The checks of what a gateway adds (harness/checks/gateway.py, retrying.py): the provider's rate-limit headers
passed on, the gateway's own-limit mark, answers the clients do not retry, and the cost against the price table."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Any

import pytest

from harness.checks import run_checks
from harness.checks.gateway import (
    check_cost,
    check_forwards_headers,
    check_not_retried,
    check_own_limit,
    price_of,
)
from harness.checks.retrying import retried_by
from harness.exchange import Exchange, ServedAnswer, UpstreamCall
from tests.harness.checks.exchanges import exchange

LIMIT_HEADERS = {
    "content-type": "application/json",
    "retry-after": "7",
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": "0",
}
ERROR_429 = json.dumps(
    {"error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": None}}
)


def _with(ex: Exchange, **setup: Any) -> Exchange:
    return dataclasses.replace(ex, setup=setup)


def _provider_429(client_headers: dict[str, str], **setup: Any) -> Exchange:
    served = ServedAnswer(429, LIMIT_HEADERS, b'{"type":"error"}')
    call = UpstreamCall("POST", "/v1/messages", {}, b"{}", {}, served)
    ex = exchange(ERROR_429.encode(), status=429, headers=client_headers, upstream=(call,))
    return _with(ex, **setup)


PATTERN = "^(retry-after|x-ratelimit-|anthropic-ratelimit-)"


def test_forwarded_headers_pass_when_every_one_arrives_with_its_value() -> None:
    ex = _provider_429(dict(LIMIT_HEADERS))
    assert list(check_forwards_headers(PATTERN, ex)) == []


def test_a_dropped_or_changed_provider_header_is_a_violation() -> None:
    headers = {
        "content-type": "application/json",
        "retry-after": "60",
        "anthropic-ratelimit-requests-limit": "50",
    }
    found = list(check_forwards_headers(PATTERN, _provider_429(headers)))
    assert {v.path for v in found} == {"retry-after", "anthropic-ratelimit-requests-remaining"}


def test_own_header_globs_and_a_documented_prefix_are_honoured() -> None:
    prefixed = {f"llm_provider-{k}": v for k, v in LIMIT_HEADERS.items()}
    setup = {"rate-limits": {"provider_headers_prefix": "llm_provider-"}}
    # The rate-limit headers pass under the documented prefix; Retry-After does not (the SDKs read its own name).
    found = list(check_forwards_headers(PATTERN, _provider_429(prefixed, **setup)))
    assert [v.path for v in found] == ["retry-after"]
    assert (
        list(check_forwards_headers(PATTERN, _provider_429({**prefixed, "retry-after": "7"}, **setup))) == []
    )
    own = {"rate-limits": {"own_headers": ["anthropic-ratelimit-*", "retry-after"]}}
    assert [v.path for v in check_forwards_headers(PATTERN, _provider_429({}, **own))] == ["retry-after"]


def test_forwarded_headers_need_an_observed_provider_answer() -> None:
    found = list(check_forwards_headers(PATTERN, exchange(b"{}", upstream=())))
    assert found and "no upstream answer" in found[0].message


@pytest.mark.parametrize(
    ("mark", "headers", "body", "present"),
    [
        ({"header": "x-gateway-ratelimited"}, {"x-gateway-ratelimited": "key"}, ERROR_429, True),
        ({"header": "x-gateway-ratelimited"}, {}, ERROR_429, False),
        ({"code": "gateway_limit"}, {}, ERROR_429.replace('"code": null', '"code": "gateway_limit"'), True),
        ({"code": "gateway_limit"}, {}, ERROR_429, False),
        ({"field": "error.subject"}, {}, ERROR_429.replace('"param"', '"subject": "apikey", "param"'), True),
        ({"field": "error.subject"}, {}, ERROR_429, False),
    ],
    ids=["header", "no-header", "code", "no-code", "field", "no-field"],
)
def test_the_own_limit_mark(mark: dict[str, str], headers: dict[str, str], body: str, present: bool) -> None:
    ex = _with(
        exchange(body.encode(), status=429, headers={"content-type": "application/json", **headers}),
        **{"rate-limits": {"own_mark": mark}},
    )
    assert (list(check_own_limit(True, ex)) == []) is present
    assert (list(check_own_limit(False, ex)) == []) is not present


def test_own_limit_without_a_declared_set_up_says_so() -> None:
    found = list(check_own_limit(True, exchange(ERROR_429.encode(), status=429)))
    assert found and "declares nothing for rate-limits" in found[0].message


@pytest.mark.parametrize(
    ("client", "status", "headers", "error", "retried"),
    [
        ("openai-sdk", 429, {}, {}, True),
        ("openai-sdk", 429, {"x-should-retry": "false"}, {}, False),
        ("openai-sdk", 429, {"retry-after": "121"}, {}, False),
        ("openai-sdk", 402, {}, {}, False),
        ("openai-sdk", 400, {"x-should-retry": "true"}, {}, True),
        ("openai-sdk", 502, {}, {}, True),
        ("anthropic-sdk", 429, {"retry-after": "3600"}, {}, True),
        ("anthropic-sdk", 402, {}, {}, False),
        ("codex", 402, {}, {"code": "insufficient_quota"}, False),
        ("codex", 402, {}, {"code": "budget_exceeded"}, True),
        ("codex", 403, {}, {"type": "usage_limit_reached"}, True),
        ("codex", 429, {}, {}, False),
        ("codex", 400, {}, {}, False),
        ("codex", 502, {"x-should-retry": "false"}, {}, True),
        ("claude-code", 429, {"x-should-retry": "false"}, {}, False),
        ("claude-code", 401, {}, {}, True),
        ("claude-code", 402, {}, {}, False),
        ("claude-code", 529, {}, {}, True),
    ],
)
def test_retry_policies(
    client: str, status: int, headers: dict[str, str], error: dict[str, str], retried: bool
) -> None:
    assert (retried_by(client, status, headers, {"error": error}) is not None) is retried


def test_not_retried_names_each_client_that_would_retry() -> None:
    ex = exchange(ERROR_429.encode(), status=429)
    found = list(check_not_retried(["openai-sdk", "codex"], ex))
    assert [v.path for v in found] == ["openai-sdk"]
    assert next(iter(check_not_retried(["no-such-client"], ex))).path == "no-such-client"


PRICES = {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}
USAGE = {"input_tokens": 1800, "cache_read_input_tokens": 60000, "cache_creation_input_tokens": 12000,
         "output_tokens": 2400, "thinking_tokens": 0}  # fmt: skip


def test_price_of_prices_every_token_class() -> None:
    # 1800 * 3 + 60000 * 0.3 + 12000 * 3.75 + 2400 * 15 = 104400 per million
    assert price_of(USAGE, PRICES, 1_000_000) == Decimal("0.1044")
    thinking = {**USAGE, "thinking_tokens": 1000}
    assert price_of(thinking, {**PRICES, "reasoning": 30}, 1_000_000) == Decimal("0.1194")
    assert price_of(USAGE, {"input": 3, "output": 15}, 1_000_000) == Decimal("0.2574")  # both tiers at input


def _cost_exchange(headers: dict[str, str], *, stream: bool = False, body: bytes = b"{}") -> Exchange:
    message = {
        "type": "message",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {k: v for k, v in USAGE.items() if k != "thinking_tokens"},
    }
    served = ServedAnswer(200, {"content-type": "application/json"}, json.dumps(message).encode())
    call = UpstreamCall("POST", "/v1/messages", {}, b"{}", {}, served)
    ex = exchange(
        body, headers={"content-type": "application/json", **headers}, upstream=(call,), stream=stream
    )
    setup = {
        "cost": {"header": "x-cost", "streamed": False, "prices": {"anthropic/claude-sonnet-5-5": PRICES}}
    }
    return _with(ex, **setup)


@pytest.mark.parametrize(
    ("headers", "ok"),
    [
        ({"x-cost": "0.1044"}, True),
        ({"x-cost": "0.10440009"}, True),
        ({"x-cost": "0.0594"}, False),
        ({}, False),
    ],
    ids=["exact", "rounded", "without-cache-writes", "absent"],
)
def test_cost_is_price_times_usage(headers: dict[str, str], ok: bool) -> None:
    assert (list(check_cost({"priced": True}, _cost_exchange(headers))) == []) is ok


def test_cost_absent_for_an_unpriced_model_and_an_unreported_stream() -> None:
    assert list(check_cost({"priced": False}, _cost_exchange({}))) == []
    zero = list(check_cost({"priced": False}, _cost_exchange({"x-cost": "0"})))
    assert zero and "absent, not 0" in zero[0].message
    assert list(check_cost({"priced": True}, _cost_exchange({}, stream=True))) == []
    assert list(check_cost({"priced": True}, _cost_exchange({"x-cost": "0.1"}, stream=True)))


def test_cost_read_from_an_answer_field() -> None:
    ex = _cost_exchange({}, body=json.dumps({"choices": [], "usage": {"cost": 0.1044}}).encode())
    setup = {"cost": {"field": "usage.cost", "prices": {"anthropic/claude-sonnet-5-5": PRICES}}}
    assert list(check_cost({"priced": True}, _with(ex, **setup))) == []


def test_cost_without_a_price_for_the_model_is_a_set_up_problem() -> None:
    ex = _with(_cost_exchange({"x-cost": "1"}), cost={"header": "x-cost", "prices": {}})
    assert "no price for" in next(iter(check_cost({"priced": True}, ex))).message


def test_the_kinds_run_by_name() -> None:
    ok, off = _cost_exchange({"x-cost": "0.1044"}), _cost_exchange({"x-cost": "0.2574"})
    assert [v for v in run_checks({"cost": {"priced": True}}, ok) if v.check == "cost"] == []
    assert [v.check for v in run_checks({"cost": {"priced": True}}, off) if v.check == "cost"] == ["cost"]
