"""Evidence never holds the user's gateway key (reports are shared): it becomes `<GATEWAY_KEY>` everywhere
the runner keeps what was sent and received, before any check runs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from harness.exchange import UpstreamCall

KEY_PLACEHOLDER = "<GATEWAY_KEY>"


def redact_headers(headers: Mapping[str, str], key: str | None) -> dict[str, str]:
    """Evidence never holds the user's gateway key (reports are shared): it becomes `<GATEWAY_KEY>`.

    Rules can still see a key that leaked upstream: `upstream_headers: {x-api-key: {excludes: "<GATEWAY_KEY>"}}`.
    """
    if not key:
        return dict(headers)
    return {name: value.replace(key, KEY_PLACEHOLDER) for name, value in headers.items()}


def redact_bytes(data: bytes, key: str | None) -> bytes:
    return data.replace(key.encode(), KEY_PLACEHOLDER.encode()) if key else data


def redact_call(call: UpstreamCall, key: str | None) -> UpstreamCall:
    if not key:
        return call
    body = redact_bytes(call.body, key)
    parsed = call.json
    if body != call.body and parsed is not None:
        parsed = json.loads(body)
    return dataclasses.replace(call, headers=redact_headers(call.headers, key), body=body, json=parsed)
