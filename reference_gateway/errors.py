"""The gateway's one error type, and the one boundary where upstream (Anthropic) errors become OpenAI errors.

Every error leaves the gateway as OpenAI's envelope `{"error": {"message", "type", "param", "code"}}` with
EZAT's status table. Messages carry no prompt text and no keys.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypedDict

ErrorType = Literal[
    "invalid_request_error", "insufficient_quota", "permission_error", "rate_limit_error", "server_error"
]


class ErrorObject(TypedDict):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorEnvelope(TypedDict):
    error: ErrorObject


class GatewayError(Exception):
    """An error the client sees: HTTP status, OpenAI envelope fields, and headers to pass on (`retry-after`)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: ErrorType,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers: Mapping[str, str] = MappingProxyType(dict(headers or {}))

    def to_object(self) -> ErrorObject:
        return {"message": self.message, "type": self.type, "param": self.param, "code": self.code}

    def to_envelope(self) -> ErrorEnvelope:
        return {"error": self.to_object()}

    def __repr__(self) -> str:
        return f"GatewayError({self.status}, {self.type!r}, code={self.code!r}, param={self.param!r}, {self.message!r})"


# Constructors for the rows of EZAT's error table ("Errors").


def invalid_request(message: str, param: str | None = None) -> GatewayError:
    return GatewayError(400, message, type="invalid_request_error", param=param)


def refused(message: str) -> GatewayError:
    """A refused field: 400, `param` is the field path the message starts with (`messages[0].role: …`)."""
    return invalid_request(message, param=message.split(":", 1)[0])


def invalid_api_key(message: str) -> GatewayError:
    return GatewayError(401, message, type="invalid_request_error", code="invalid_api_key")


def model_not_found(model: str) -> GatewayError:
    return GatewayError(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        type="invalid_request_error",
        code="model_not_found",
        param="model",
    )


def request_too_large(limit_bytes: int) -> GatewayError:
    return GatewayError(
        413,
        f"The request body is larger than {limit_bytes // (1024 * 1024)} MB.",
        type="invalid_request_error",
        code="request_too_large",
    )


def server_error(message: str = "The server had an error while processing your request.") -> GatewayError:
    return GatewayError(500, message, type="server_error")


def timeout(seconds: float) -> GatewayError:
    return GatewayError(
        504,
        f"The request took longer than {seconds:g} seconds; stream it instead.",
        type="server_error",
        code="timeout",
    )


def not_found(path: str) -> GatewayError:
    return GatewayError(404, f"Unknown path {path}.", type="invalid_request_error")


# The upstream boundary. Anthropic error types (wire reference 1.8) → the status they come with, for errors
# that arrive without a status of their own (an `event: error` inside a 200 stream).
_STATUS_OF_TYPE: Mapping[str, int] = MappingProxyType(
    {
        "invalid_request_error": 400,
        "authentication_error": 401,
        "billing_error": 402,
        "permission_error": 403,
        "not_found_error": 404,
        "request_too_large": 413,
        "rate_limit_error": 429,
        "api_error": 500,
        "timeout_error": 504,
        "overloaded_error": 529,
    }
)

_RETRY_HEADERS = ("retry-after", "retry-after-ms")
_MAX_MESSAGE = 500


def _upstream_message(error: Mapping[str, Any]) -> str:
    message = error.get("message")
    if not isinstance(message, str) or not message:
        return "The upstream provider rejected the request."
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


def from_upstream(
    status: int | None,
    error: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    model: str | None = None,
) -> GatewayError:
    """Map one Anthropic error (HTTP status and the inner `error` object) to the client's error.

    This is the only place upstream errors are translated: non-streaming status errors, errors at the start of
    a stream, and `event: error` in the middle of one all come through here.
    """
    upstream_type = error.get("type")
    if status is None or status == 200:
        status = _STATUS_OF_TYPE.get(upstream_type if isinstance(upstream_type, str) else "", 500)
    passed: dict[str, str] = {}
    for name in _RETRY_HEADERS:
        value = (headers or {}).get(name)
        if value is not None:
            passed[name] = value
    if status == 400 or status in (409, 422):
        # The upstream's message says what was invalid (field paths, limits); it quotes no prompt text.
        return invalid_request(_upstream_message(error))
    if status == 401:
        # The gateway's own upstream key was rejected: the client's key is fine, so this is not a 401 for them.
        return server_error("The gateway could not authenticate with the upstream provider.")
    if status == 402:
        return GatewayError(
            402,
            "The upstream balance is used up or its spend limit was reached.",
            type="insufficient_quota",
            code="insufficient_quota",
        )
    if status == 403:
        return GatewayError(403, "Access to this model is not permitted.", type="permission_error")
    if status == 404:
        if model is not None:
            return model_not_found(model)
        return GatewayError(
            404, _upstream_message(error), type="invalid_request_error", code="model_not_found"
        )
    if status == 413:
        return GatewayError(
            413,
            "The request is too large for the upstream provider.",
            type="invalid_request_error",
            code="request_too_large",
        )
    if status == 429:
        return GatewayError(
            429,
            "Too many requests; wait for retry-after seconds.",
            type="rate_limit_error",
            code="rate_limit_exceeded",
            headers=passed,
        )
    if status in (503, 529):
        # EZAT: "529 becomes 503"; `retry-after` is passed on.
        return GatewayError(
            503, "No capacity right now; retry later.", type="server_error", code="overloaded", headers=passed
        )
    if status in (408, 504):
        return GatewayError(504, "The upstream provider timed out.", type="server_error", code="timeout")
    if 400 <= status < 500:
        return invalid_request(_upstream_message(error))
    return server_error("The upstream provider had an error while processing your request.")


def from_upstream_body(
    status: int, body: bytes, *, headers: Mapping[str, str] | None = None, model: str | None = None
) -> GatewayError:
    """`from_upstream` for a raw HTTP error body (which may not be JSON at all, e.g. from a proxy)."""
    error: Mapping[str, Any] = {}
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        error = parsed["error"]
    return from_upstream(status, error, headers=headers, model=model)
