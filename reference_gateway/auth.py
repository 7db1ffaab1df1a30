"""Client authentication: `Authorization: Bearer KEY` or `x-api-key: KEY`, compared in constant time.

The client's key is only compared here; it is never forwarded upstream and never logged.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reference_gateway.errors import GatewayError, invalid_api_key


@dataclass(frozen=True)
class KeyRing:
    keys: frozenset[bytes]

    @classmethod
    def of(cls, keys: Iterable[str]) -> KeyRing:
        return cls(frozenset(k.strip().encode() for k in keys if k.strip()))

    def check(
        self,
        headers: Mapping[str, str],
        *,
        bearer_case_sensitive: bool = False,
        authorization_only: bool = False,
    ) -> GatewayError | None:
        """None when the request carries a known key, else the 401 to send (EZAT: code `invalid_api_key`).

        LYRouter: "`Bearer` is case-sensitive"; "when both are present, only `Authorization` is read"."""
        presented = _presented_key(headers, bearer_case_sensitive, authorization_only)
        if presented is None:
            return invalid_api_key(
                "You didn't provide an API key. Send it as `Authorization: Bearer KEY` or `x-api-key: KEY`."
            )
        candidate = presented.encode()
        # Compare against every key so the time taken does not depend on which key matched.
        matched = False
        for key in self.keys:
            matched |= hmac.compare_digest(candidate, key)
        if not matched:
            return invalid_api_key("Incorrect API key provided.")
        return None


def presented_key(
    headers: Mapping[str, str], bearer_case_sensitive: bool = False, authorization_only: bool = False
) -> str | None:
    """The key the request presents (`Authorization: Bearer`, else `x-api-key`), or None."""
    return _presented_key(headers, bearer_case_sensitive, authorization_only)


def _presented_key(
    headers: Mapping[str, str], bearer_case_sensitive: bool, authorization_only: bool
) -> str | None:
    authorization = headers.get("authorization")
    scheme, _, token = (authorization or "").partition(" ")
    is_bearer = scheme == "Bearer" if bearer_case_sensitive else scheme.lower() == "bearer"
    if is_bearer and token.strip():
        return token.strip()
    if authorization is not None and authorization_only:
        return None
    api_key = headers.get("x-api-key", "").strip()
    return api_key or None
