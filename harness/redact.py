"""Evidence never holds a secret (reports are shared), before any check runs:

- the user's gateway key becomes `<GATEWAY_KEY>` everywhere the runner keeps what was sent and received, so a rule
  can still see it leak upstream (`upstream_headers: {x-api-key: {excludes: "<GATEWAY_KEY>"}}`);
- every other credential the gateway sent upstream (its own provider key: `authorization`, `x-api-key`,
  `x-goog-api-key`, `api-key`, `proxy-authorization`, a `key=` query parameter) becomes `<UPSTREAM_KEY>`, in that
  header and wherever else the same value appears in the call (another header, the body).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl

from harness.exchange import Exchange, UpstreamCall

KEY_PLACEHOLDER = "<GATEWAY_KEY>"
UPSTREAM_PLACEHOLDER = "<UPSTREAM_KEY>"
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization")
CREDENTIAL_QUERY = ("key", "api_key", "api-key")
_SCHEME = re.compile(r"^(Bearer|Basic|Token)\s+", re.IGNORECASE)


def redact_headers(headers: Mapping[str, str], key: str | None) -> dict[str, str]:
    """The user's gateway key, wherever it is in the headers, becomes `<GATEWAY_KEY>`."""
    if not key:
        return dict(headers)
    return {name: value.replace(key, KEY_PLACEHOLDER) for name, value in headers.items()}


def redact_bytes(data: bytes, key: str | None) -> bytes:
    return data.replace(key.encode(), KEY_PLACEHOLDER.encode()) if key else data


def upstream_secrets(headers: Mapping[str, str], query: str = "") -> list[str]:
    """The credential values of an upstream call that are not the (already redacted) gateway key."""
    found = []
    for name, value in headers.items():
        if name.lower() in CREDENTIAL_HEADERS:
            secret = _SCHEME.sub("", value).strip()
            if secret and KEY_PLACEHOLDER not in secret and secret != UPSTREAM_PLACEHOLDER:
                found.append(secret)
    for name, value in parse_qsl(query, keep_blank_values=False):
        if name.lower() in CREDENTIAL_QUERY and value and KEY_PLACEHOLDER not in value:
            found.append(value)
    return sorted(set(found), key=len, reverse=True)  # longest first: one secret never half-replaced


def _scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, UPSTREAM_PLACEHOLDER)
    return text


def redact_call(call: UpstreamCall, key: str | None) -> UpstreamCall:
    body = redact_bytes(call.body, key)
    headers = redact_headers(call.headers, key)
    secrets = upstream_secrets(headers, call.query)
    if secrets:
        headers = {name: _scrub(value, secrets) for name, value in headers.items()}
        body = _scrub(body.decode("utf-8", errors="surrogateescape"), secrets).encode(
            "utf-8", errors="surrogateescape"
        )
    query = _scrub(call.query, secrets) if secrets else call.query
    path = _scrub(call.path, secrets) if secrets else call.path
    if body == call.body and headers == dict(call.headers) and query == call.query:
        return call
    parsed = call.json
    if body != call.body and parsed is not None:
        parsed = json.loads(body)
    return dataclasses.replace(call, headers=headers, body=body, json=parsed, query=query, path=path)


def redact_setup_keys(exchange: Exchange, keys: Mapping[str, str]) -> Exchange:
    """The keys a gateway's set-up declares (harness/featuresetup.py: `OVER_BUDGET_KEY` → its value) become
    `<OVER_BUDGET_KEY>` everywhere the exchange holds them: the request, the answer, every upstream call (where a
    gateway that leaked one would show it)."""
    pairs = [(value, f"<{name}>") for name, value in keys.items() if value]
    if not pairs:
        return exchange

    def text(value: str) -> str:
        for secret, placeholder in pairs:
            value = value.replace(secret, placeholder)
        return value

    def data(value: bytes) -> bytes:
        for secret, placeholder in pairs:
            value = value.replace(secret.encode(), placeholder.encode())
        return value

    def call(one: UpstreamCall) -> UpstreamCall:
        body = data(one.body)
        parsed = json.loads(body) if body != one.body and one.json is not None else one.json
        headers = {k: text(v) for k, v in one.headers.items()}
        return dataclasses.replace(one, headers=headers, body=body, json=parsed, query=text(one.query))

    request = exchange.request
    body = data(request.body)
    parsed = json.loads(body) if body != request.body and request.json is not None else request.json
    response = exchange.response
    return dataclasses.replace(
        exchange,
        request=dataclasses.replace(
            request, headers={k: text(v) for k, v in request.headers.items()}, body=body, json=parsed
        ),
        response=dataclasses.replace(
            response, headers={k: text(v) for k, v in response.headers.items()}, raw=data(response.raw)
        ),
        upstream=None if exchange.upstream is None else tuple(call(c) for c in exchange.upstream),
    )
