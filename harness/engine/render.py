"""Rendering: a rule's request with the run's placeholders, case marker and padding filled in, and its upstream
plan with the gateway's declared parameters. Pure: no I/O."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urljoin, urlsplit

from harness import __version__, surfaces
from harness.engine import steps as steps_mod
from harness.engine.target import IMAGES_REF, NONSTREAM_TIMEOUT_RE, Target
from harness.exchange import SentRequest
from harness.spec.model import ROLE_RE, Rule
from harness.surfaces.base import Surface


def upstream_plan(upstream: Mapping[str, Any] | None, target: Target) -> dict[str, Any] | None:
    """The rule's upstream plan with the gateway's declared parameters filled in: `$KEEPALIVE_SILENCE` (the
    keep-alive silence) and `$NONSTREAM_TIMEOUT+N` (the non-streaming limit plus N seconds)."""
    if not upstream:
        return None

    def replace(text: str) -> Any:
        if text == "$KEEPALIVE_SILENCE":
            return target.keepalive_silence
        whole = NONSTREAM_TIMEOUT_RE.fullmatch(text)
        if whole is None or target.nonstream_timeout is None:
            return text
        return target.nonstream_timeout + float(whole.group(1) or 0)

    return cast(dict[str, Any], _substitute(dict(upstream), replace))


def new_marker(rule_id: str) -> str:
    return f"[gc:{rule_id}#{secrets.token_hex(4)}]"


def _substitute(value: Any, replace: Any) -> Any:
    if isinstance(value, str):
        return replace(value)
    if isinstance(value, Mapping):
        return {replace(k): _substitute(v, replace) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, replace) for v in value]
    return value


def _placeholder_replacer(
    models: Mapping[str, str | None],
    marker: str | None,
    images_url: str | None,
    gateway_key: str | None,
    keys: Mapping[str, str] | None = None,
) -> Any:
    def replace(text: str) -> str:
        if "$" not in text:
            return text
        if images_url is not None:
            text = text.replace(IMAGES_REF, images_url)
        if "${data_url:" in text:
            text = steps_mod.expand_data_urls(text)

        def role(match: re.Match[str]) -> str:
            name = match.group(1)
            if name == "MARKER":
                return marker or ""
            if name == "GATEWAY_KEY":
                return gateway_key or ""
            if keys and name in keys:  # a key the set-up declares (`$OVER_BUDGET_KEY`)
                return keys[name]
            return models.get(name) or match.group(0)

        return ROLE_RE.sub(role, text)

    return replace


def _contains_marker_placeholder(value: Any) -> bool:
    return "$MARKER" in json.dumps(value)


def encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def pad_body(body: Any, size: int, surface: Surface) -> bytes:
    """Grow the user's text (where the surface keeps it) with filler until the encoded body is exactly `size`
    bytes."""
    encoded = encode(body)
    missing = size - len(encoded)
    if missing <= 0 or not isinstance(body, Mapping):
        return encoded
    # The filler goes in as a short token that is then replaced in the encoded bytes: "x" needs no escaping,
    # so the result is the encoding of the text grown by " " + "x" * (missing - 1), without encoding tens of
    # megabytes of it (a fifth of a second of CPU per 32 MB body).
    token = "gc-pad-" + secrets.token_hex(8)
    return _fill(encode(surface.grow_text(body, token)), token, missing - 1)


def _fill(encoded: bytes, token: str, count: int) -> bytes:
    head, found, tail = encoded.partition(token.encode("ascii"))
    assert found and token.encode("ascii") not in tail, "the filler token is unique"
    return b"".join((head, b"x" * count, tail))


def gateway_url_for(base: str, path: str) -> str:
    """A relative path (`chat/completions`) is under the base URL; `/api/models` is from the host root."""
    if path.startswith("/"):
        parts = urlsplit(base)
        return f"{parts.scheme}://{parts.netloc}{path}"
    return urljoin(base.rstrip("/") + "/", path)


def render_request(rule: Rule, variant: Mapping[str, Any], target: Target, marker: str | None) -> SentRequest:
    spec = rule.request
    images_url = f"{target.replay_url.rstrip('/')}/__gc/files" if target.replay_url else None
    replace = _placeholder_replacer(target.models, marker, images_url, target.gateway_key, target.setup.keys)
    headers = {
        "content-type": "application/json",
        "accept-encoding": "identity",
        "user-agent": f"gateway-conformance/{__version__}",
    }
    surface = surfaces.surface(target.surface)
    headers.update(surface.request_headers)
    if target.gateway_key:
        headers["authorization"] = f"Bearer {target.gateway_key}"
    for name, value in (spec.get("headers") or {}).items():
        if value is None:
            headers.pop(name.lower(), None)
        else:
            headers[name.lower()] = replace(value)
    method = spec.get("method", "POST")
    url = gateway_url_for(target.gateway_url, spec.get("path", surface.endpoint))
    transport = spec.get("transport", "http")
    if transport != "http":  # the same endpoint upgraded (harness/engine/socket.py sends its turns)
        url = "ws" + url[4:] if url.startswith("http") else url
    if "raw_body" in spec:
        raw = replace(spec["raw_body"])
        return SentRequest(method, url, headers, raw.encode("utf-8"), None)
    if "body" not in spec:
        if method in ("GET", "HEAD", "DELETE", "OPTIONS"):
            headers.pop("content-type", None)
        return SentRequest(method, url, headers, b"", None)
    body = spec["body"]
    if isinstance(body, Mapping) and variant:
        body = surface.apply_variant(body, variant)
    if spec.get("marker", "auto") == "auto" and marker is not None and not _contains_marker_placeholder(body):
        body = surface.insert_marker(body, marker)
    body = _substitute(body, replace)
    encoded = pad_body(body, spec["pad_to_bytes"], surface) if "pad_to_bytes" in spec else encode(body)
    return SentRequest(method, url, headers, encoded, body, transport=transport)
