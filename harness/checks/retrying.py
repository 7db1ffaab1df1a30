"""Whether a client retries an error answer, as its source decides it: the policies the `not_retried` check
applies (specs/features/gateway-features.md, "Budget"). Pure: an answer's status, headers and error document in,
the reason a client would send the request again out (None: it gives up and shows the error).

- `openai-sdk`: openai-python 3.57 `_base_client._should_retry` (openai-node's `shouldRetry` is its twin): a
  `Retry-After` over 120 s (MAX_RETRY_AFTER_DELAY) is not waited on; then `x-should-retry: true|false` is obeyed;
  then 408, 409, 429 and 5xx are retried.
- `anthropic-sdk`: anthropic-python 2.16 `_should_retry` (and the TypeScript SDK): `x-should-retry` obeyed, then
  408, 409, 429 and 5xx retried (any Retry-After is waited on).
- `codex`: Codex CLI (openai/codex codex-rs `core/src/api_bridge.rs` map_api_error, `protocol/src/error.rs`
  `CodexErr::is_retryable`, `codex-client` RetryOn with `retry_429: false`): an error whose code or type says a
  quota or plan limit (`insufficient_quota`, `quota_exceeded`, `usage_limit_reached`, `usage_not_included`) or a
  context overflow ends the turn, whatever the status; so do 400 (InvalidRequest) and 429 (RetryLimit); a 5xx
  and any other status (UnexpectedStatus) are retried — a 502 resends the turn (lidge-jun/opencodex PR#4758).
  Codex reads no `x-should-retry`.
- `claude-code`: Claude Code's gateway protocol (peers/claude-gateway/protocol.md, "Errors"): it obeys
  `x-should-retry: false`; without it a 401 is retried "with backoff for about three minutes", a 501 "asks once
  more", 429 and 529 back off and retry, as the Anthropic SDK it is built on retries 408, 409 and 5xx.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

# openai-python `_constants.MAX_RETRY_AFTER_DELAY`: a longer server-directed wait is not retried at all.
MAX_RETRY_AFTER = 120.0
# Codex: the error codes and types that end a turn whatever the status (QuotaExceeded, UsageLimitReached,
# UsageNotIncluded, ContextWindowExceeded).
CODEX_TERMINAL_KINDS = frozenset(
    {
        "insufficient_quota",
        "quota_exceeded",
        "usage_limit_reached",
        "usage_not_included",
        "context_length_exceeded",
    }
)

Policy = Callable[[int, Mapping[str, str], Any], "str | None"]


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The server-directed wait in seconds (`retry-after-ms`, then `retry-after`, as openai-python reads them)."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue
    return None


def _stainless(status: int, headers: Mapping[str, str], cap: float | None) -> str | None:
    wait = retry_after(headers)
    if cap is not None and wait is not None and math.isfinite(wait) and wait > cap:
        return None
    said = headers.get("x-should-retry")
    if said == "true":
        return "x-should-retry: true"
    if said == "false":
        return None
    if status in (408, 409, 429) or status >= 500:
        return f"it retries status {status}"
    return None


def openai_sdk(status: int, headers: Mapping[str, str], document: Any) -> str | None:
    return _stainless(status, headers, MAX_RETRY_AFTER)


def anthropic_sdk(status: int, headers: Mapping[str, str], document: Any) -> str | None:
    return _stainless(status, headers, None)


def _error_kinds(document: Any) -> set[str]:
    """The `code` and `type` strings of an error document's `error` object (lower case)."""
    error = document.get("error") if isinstance(document, Mapping) else None
    if not isinstance(error, Mapping):
        return set()
    return {str(error[k]).lower() for k in ("code", "type") if isinstance(error.get(k), str)}


def codex(status: int, headers: Mapping[str, str], document: Any) -> str | None:
    if status not in (401, 403) and _error_kinds(document) & CODEX_TERMINAL_KINDS:
        return None
    if status in (400, 429):
        return None
    return f"it retries the turn after status {status}"


def claude_code(status: int, headers: Mapping[str, str], document: Any) -> str | None:
    said = headers.get("x-should-retry")
    if said == "false":
        return None
    if said == "true":
        return "x-should-retry: true"
    if status in (401, 408, 409, 429, 501) or status >= 500:
        return f"it retries status {status} without x-should-retry: false"
    return None


POLICIES: Mapping[str, Policy] = {
    "openai-sdk": openai_sdk,
    "anthropic-sdk": anthropic_sdk,
    "codex": codex,
    "claude-code": claude_code,
}


def retried_by(client: str, status: int, headers: Mapping[str, str], document: Any) -> str | None:
    """Why `client` would send the request again after this answer, or None (it gives up). Header names are
    lower-case."""
    return POLICIES[client](status, headers, document)


__all__ = ["MAX_RETRY_AFTER", "POLICIES", "retried_by", "retry_after"]
