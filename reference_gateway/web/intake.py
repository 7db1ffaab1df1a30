"""Request intake, before anything is routed: the header size limit and the client's key, the content type,
the body read within its limit, and the body parsed into a JSON object — each refused in the profile's words.

LYRouter reading: auth is checked before the content type; the content type before the body is read.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from reference_gateway import errors
from reference_gateway.auth import presented_key
from reference_gateway.settings import GatewaySettings
from reference_gateway.web.body import BodyError, parse_json
from reference_gateway.web.limits import KeyLimiter


class Intake:
    def __init__(self, settings: GatewaySettings) -> None:
        self._settings = settings
        self._limiter = KeyLimiter(settings.key_policies)

    async def read(self, request: Request) -> dict[str, Any]:
        """The request's body as a JSON object, once the request is let in; raises `GatewayError` otherwise."""
        self.authenticate(request)
        self._check_content_type(request)
        return self._parse_body(await read_body(request, self._settings.max_body_bytes))

    def authenticate(self, request: Request) -> None:
        limit = self._settings.max_header_bytes
        if sum(len(name) + len(value) + 4 for name, value in request.scope["headers"]) > limit:
            raise errors.headers_too_large(limit)
        if self._settings.keys is not None:
            policy = self._settings.profile.requests
            failure = self._settings.keys.check(
                request.headers,
                bearer_case_sensitive=policy.bearer_case_sensitive,
                authorization_only=policy.authorization_only,
            )
            if failure is not None:
                raise failure
        if self._settings.key_policies:
            # The gateway's own limits on the key (a spent budget, its rate limit), before anything is routed.
            policy = self._settings.profile.requests
            key = presented_key(request.headers, policy.bearer_case_sensitive, policy.authorization_only)
            refusal = self._limiter.refusal(key, self._settings.profile.key_limits)
            if refusal is not None:
                raise refusal

    def _check_content_type(self, request: Request) -> None:
        # LYRouter: without Content-Type the body is parsed as JSON; any other value is a plain-text 400.
        template = self._settings.profile.requests.unsupported_content_type
        value = request.headers.get("content-type", "").strip()
        if template is not None and value and value.split(";")[0].strip().lower() != "application/json":
            raise errors.plain_text(
                400, template.format(value=errors.echo(value)), media_type="application/json"
            )

    def _parse_body(self, raw: bytes) -> dict[str, Any]:
        policy = self._settings.profile.requests
        flat = policy.invalid_json_with_default if self._settings.default_model is not None else None
        try:
            body = parse_json(raw)
        except BodyError as exc:
            if flat is not None:
                # The parser's message says where parsing stopped; it quotes no request text.
                raise errors.flat_message(400, flat.format(error=exc.problem)) from exc
            if exc.kind == "limit":
                raise errors.with_problem(policy.invalid_json.error(), exc.problem) from exc
            raise policy.invalid_json.error() from exc
        if not isinstance(body, dict):
            if flat is not None:
                raise errors.flat_message(
                    400, flat.format(error=f"the top level is {_json_kind(body)}, not an object")
                )
            raise policy.not_an_object.error()
        return body


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes `limit` (never buffered beyond it). The rest is drained,
    up to a bound, so that the client gets to read the 413 instead of a reset connection."""
    declared = request.headers.get("content-length", "")
    too_large = declared.isdigit() and int(declared) > limit
    body = bytearray()
    drained = 0
    async for chunk in request.stream():
        if too_large:
            drained += len(chunk)
            if drained > 4 * limit:
                break
            continue
        body += chunk
        if len(body) > limit:
            too_large, drained = True, len(body)
            body = bytearray()
    if too_large:
        raise errors.request_too_large(limit)
    return bytes(body)


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"
