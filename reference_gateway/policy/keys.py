"""What the gateway holds against a client key (pure data): its own rate limit, and whether its budget is spent
(specs/features/gateway-features.md, "Rate limits" and "Budget"); and each profile's words for refusing one.

The gateway's own limit is told from a provider's 429 by the header `x-gateway-ratelimited: key` (LYRouter's
body also names its `subject`), and a spent budget is refused in a way no client retries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reference_gateway.errors import ErrorType, GatewayError, RawBody

# The mark of the gateway's own 429 (a provider's 429 passed on never carries it): what an operator and a client
# read to tell "this gateway limits you" from "the provider limits the gateway".
OWN_LIMIT_HEADER = "x-gateway-ratelimited"


@dataclass(frozen=True)
class KeyPolicy:
    """One client key's limits: at most `requests_per_minute` requests in any 60 seconds (0: every request is over
    it), and whether its budget is spent."""

    requests_per_minute: int | None = None
    over_budget: bool = False


class KeyPolicyError(ValueError):
    """A `--rate-limit` or `--over-budget-key` that cannot be used."""


def parse_key_policies(rate_limits: Sequence[str], over_budget: Sequence[str]) -> dict[str, KeyPolicy]:
    """`KEY=N` rate limits and over-budget keys, as the command line gives them."""
    policies: dict[str, KeyPolicy] = {}
    for given in rate_limits:
        key, sep, count = given.rpartition("=")
        if not sep or not key.strip() or not count.strip().isdigit():
            raise KeyPolicyError(f"--rate-limit {given!r}: expected KEY=N (N requests a minute, 0 for none)")
        policies[key.strip()] = KeyPolicy(requests_per_minute=int(count))
    for key in over_budget:
        if not key.strip():
            raise KeyPolicyError("--over-budget-key: empty key")
        old = policies.get(key.strip(), KeyPolicy())
        policies[key.strip()] = KeyPolicy(old.requests_per_minute, over_budget=True)
    return policies


@dataclass(frozen=True)
class KeyLimits:
    """A profile's refusals of a key: its own rate limit (429: `rate_limited_body` replaces the envelope when the
    doc gives its own shape) and a spent budget (never a 5xx, never retried: `over_budget_headers`)."""

    rate_limited: tuple[int, str, ErrorType, str | None] = (
        429,
        "Too many requests for this key; wait for retry-after seconds.",
        "rate_limit_error",
        "rate_limit_exceeded",
    )
    # LYRouter's own 429 body (`{"error": {message, type, subject, metric, window, limit, used, reset_at}}`);
    # None: the gateway's envelope.
    lyrouter_body: bool = False
    over_budget: tuple[int, str, ErrorType, str | None] = (
        402,
        "This key reached its spend limit; raise the limit or use another key.",
        "insufficient_quota",
        "insufficient_quota",
    )
    over_budget_headers: Mapping[str, str] = field(default_factory=lambda: {"x-should-retry": "false"})

    def rate_limit_error(self, limit: int, retry_after: int, reset_at: str) -> GatewayError:
        status, message, kind, code = self.rate_limited
        headers = {"retry-after": str(retry_after), OWN_LIMIT_HEADER: "key"}
        raw = None
        if self.lyrouter_body:
            # LYRouter "429: rate limits and quotas": the key's own limit names its subject, metric and window; with
            # its "form" {"error":{"message","type","code"}} and OpenAI's `param` (null), which the SDKs read.
            message = "rate limit exceeded on apikey requests/minute"
            error = {"message": message, "type": kind, "param": None, "code": code, "subject": "apikey",
                     "metric": "requests", "window": "minute", "limit": limit, "used": limit,
                     "reset_at": reset_at}  # fmt: skip
            raw = RawBody(json.dumps({"error": error}).encode(), "application/json")
        return GatewayError(status, message, type=kind, code=code, headers=headers, raw=raw)

    def over_budget_error(self) -> GatewayError:
        status, message, kind, code = self.over_budget
        return GatewayError(status, message, type=kind, code=code, headers=self.over_budget_headers)


__all__ = ["OWN_LIMIT_HEADER", "KeyLimits", "KeyPolicy", "KeyPolicyError", "parse_key_policies"]
