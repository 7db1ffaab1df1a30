"""The gateway's own limits on a client key (web/limits.py, policy/keys.py): a sliding window of requests a minute, a
spent budget, each refused at intake in the profile's words on every surface, with what a client needs to read
(Retry-After, the own-limit mark, x-should-retry false); and the headers an error passes on (errors.passed_headers)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from reference_gateway.app import GatewaySettings, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.errors import passed_headers
from reference_gateway.policy.keys import KeyPolicy, KeyPolicyError, parse_key_policies
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import EZAT, LYROUTER, RELAY
from reference_gateway.policy.vocabulary import Profile
from reference_gateway.upstream.client import UpstreamSettings
from reference_gateway.web.limits import KeyLimiter

LIMITED, SPENT, PLAIN = "gc-limited", "gc-spent", "gc-plain"


def test_policies_from_the_command_line() -> None:
    policies = parse_key_policies([f"{LIMITED}=2", f"{SPENT}=5"], [SPENT])
    assert policies == {LIMITED: KeyPolicy(2), SPENT: KeyPolicy(5, over_budget=True)}
    for bad in ("no-count", "k=-1", "=3"):
        with pytest.raises(KeyPolicyError):
            parse_key_policies([bad], [])


def test_the_window_admits_n_a_minute_and_says_when_the_next_is_admitted() -> None:
    now = [1000.0]
    limiter = KeyLimiter({LIMITED: KeyPolicy(2), "zero": KeyPolicy(0)}, clock=lambda: now[0])
    limits = EZAT.key_limits
    assert limiter.refusal(LIMITED, limits) is None
    now[0] += 10
    assert limiter.refusal(LIMITED, limits) is None
    refused = limiter.refusal(LIMITED, limits)
    assert refused is not None and refused.status == 429 and refused.headers["retry-after"] == "50"
    assert refused.headers["x-gateway-ratelimited"] == "key"
    now[0] += 50
    assert limiter.refusal(LIMITED, limits) is None  # the first request left the window
    zero = limiter.refusal("zero", limits)
    assert zero is not None and zero.headers["retry-after"] == "60"
    assert limiter.refusal(PLAIN, limits) is None and limiter.refusal(None, limits) is None


def _app(profile: Profile) -> Any:
    settings = GatewaySettings(
        profile=profile,
        catalog=load_catalog(shipped=profile.catalog),
        upstream=UpstreamSettings(base_url="http://127.0.0.1:9", api_key="sk-up"),
        keys=KeyRing.of([PLAIN, LIMITED, SPENT]),  # the CLI accepts a limited key like --api-key
        state_url=None,
        key_policies=parse_key_policies([f"{LIMITED}=0"], [SPENT]),
    )
    return create_app(settings)


def _post(profile: Profile, path: str, key: str, body: dict[str, Any]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=_app(profile))
        async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
            return await client.post(path, json=body, headers={"authorization": f"Bearer {key}"})

    return asyncio.run(go())


CHAT = {"model": "claude-sonnet-5-5", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-sonnet-5-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


def test_ezat_refuses_in_its_error_table() -> None:
    limited = _post(EZAT, "/v1/chat/completions", LIMITED, CHAT)
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert limited.headers["retry-after"] == "60" and limited.headers["x-gateway-ratelimited"] == "key"
    spent = _post(EZAT, "/v1/chat/completions", SPENT, CHAT)
    assert spent.status_code == 402 and spent.json()["error"]["code"] == "insufficient_quota"
    assert spent.headers["x-should-retry"] == "false"


def test_on_messages_a_spent_budget_is_billing_error() -> None:
    spent = _post(RELAY, "/v1/messages", SPENT, {**MESSAGES, "model": "claude-sonnet"})
    assert spent.status_code == 429 and spent.json()["error"]["type"] == "billing_error"
    assert spent.headers["x-should-retry"] == "false"
    limited = _post(EZAT, "/v1/messages", LIMITED, MESSAGES)
    assert limited.status_code == 429 and limited.json()["error"]["type"] == "rate_limit_error"
    assert limited.headers["retry-after"] == "60" and limited.headers["x-gateway-ratelimited"] == "key"


def test_lyrouter_names_the_subject_and_responses_keep_openais_envelope() -> None:
    limited = _post(LYROUTER, "/v1/chat/completions", LIMITED, {**CHAT, "model": "gpt-4.1"})
    error = limited.json()["error"]
    assert limited.status_code == 429 and error["subject"] == "apikey" and "param" in error
    spent = _post(RELAY, "/v1/responses", SPENT, {"model": "claude-sonnet", "input": "hi"})
    assert spent.status_code == 429 and spent.json()["error"]["code"] == "insufficient_quota"
    assert spent.headers["x-should-retry"] == "false"


def test_an_error_passes_on_the_retry_hints_and_rate_limit_headers_only() -> None:
    headers = {"Retry-After": "7", "x-ratelimit-remaining-tokens": "0", "anthropic-ratelimit-requests-limit": "50",
               "x-should-retry": "true", "request-id": "r", "content-type": "application/json"}  # fmt: skip
    assert passed_headers(headers) == {
        "retry-after": "7",
        "x-ratelimit-remaining-tokens": "0",
        "anthropic-ratelimit-requests-limit": "50",
        "x-should-retry": "true",
    }
