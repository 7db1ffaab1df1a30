"""The gateway's one error type, and the one boundary where upstream errors become the client's errors.

Errors leave the gateway as OpenAI's envelope `{"error": {"message", "type", "param", "code"}}`, or, where a
profile says so, as a raw body (an upstream error forwarded unchanged, an HTML page, one line of text).
Messages carry no prompt text and no keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
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


@dataclass(frozen=True)
class RawBody:
    """A body sent exactly as it is instead of the envelope."""

    content: bytes
    media_type: str


class GatewayError(Exception):
    """An error the client sees: HTTP status, OpenAI envelope fields, and headers to pass on (`retry-after`).

    `raw` replaces the envelope on the wire; `retryable` marks an upstream failure after which the next channel
    may be tried (set only at the upstream boundary).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: ErrorType,
        code: str | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
        raw: RawBody | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.raw = raw
        self.retryable = retryable
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


# Echoed client values (a model name, a path, a header) are cut to this many characters: a 1 MB `model` is
# not sent back whole in the 404.
MAX_ECHO = 64


def echo(value: object) -> str:
    """A client value as quoted in an error message: `str` (or `repr` for non-strings), cut to `MAX_ECHO`."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_ECHO else text[: MAX_ECHO - 1] + "…"


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
        f"The model `{echo(model)}` does not exist or you do not have access to it.",
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


def with_problem(error: GatewayError, problem: str) -> GatewayError:
    """`error` with `problem` appended to its message (`…: it is nested too deeply.`), for a profile's fixed
    message that would not otherwise say what was wrong."""
    end = "." if error.message.endswith(".") else ""
    return GatewayError(
        error.status,
        f"{error.message.rstrip('.')}: {problem}{end}",
        type=error.type,
        code=error.code,
        param=error.param,
        headers=error.headers,
    )


def headers_too_large(limit_bytes: int) -> GatewayError:
    return GatewayError(
        431,
        f"The request headers are larger than {limit_bytes // 1024} KB.",
        type="invalid_request_error",
        code="request_header_fields_too_large",
    )


def server_error(message: str = "The server had an error while processing your request.") -> GatewayError:
    return GatewayError(500, message, type="server_error")


def bad_upstream_answer(expected: str) -> GatewayError:
    """A 200 from the upstream that is not the protocol's answer: 502, never a made-up success. Retryable: the
    next channel may answer properly."""
    return GatewayError(
        502,
        f"The upstream provider sent an answer that is not {expected}.",
        type="server_error",
        code="bad_upstream_response",
        retryable=True,
    )


def timeout(seconds: float) -> GatewayError:
    return GatewayError(
        504,
        f"The request took longer than {seconds:g} seconds; stream it instead.",
        type="server_error",
        code="timeout",
    )


def plain_text(status: int, line: str, *, media_type: str) -> GatewayError:
    """LYRouter: "Some 400s generated by the gateway itself are a single line of plain text rather than JSON"."""
    return GatewayError(
        status, line, type="invalid_request_error", raw=RawBody(line.encode() + b"\n", media_type)
    )


def flat_message(status: int, message: str) -> GatewayError:
    """LYRouter's `{"message": "…"}` body "with no outer `error`"."""
    body = json.dumps({"message": message}, ensure_ascii=False).encode()
    return GatewayError(status, message, type="invalid_request_error", raw=RawBody(body, "application/json"))


_HTML = (
    "<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
    "<center><h1>{status} {reason}</h1></center>\r\n</body>\r\n</html>\r\n"
)


def html_page(status: int, reason: str, message: str, *, retryable: bool = True) -> GatewayError:
    """LYRouter: "500 / 504 mean the connection to the upstream failed or the wait for the upstream timed out;
    the response body is an HTML page rather than JSON"."""
    page = _HTML.format(status=status, reason=reason).encode()
    return GatewayError(
        status,
        message,
        type="server_error",
        raw=RawBody(page, "text/html; charset=utf-8"),
        retryable=retryable,
    )


def forwarded(status: int, body: bytes, headers: Mapping[str, str], *, retryable: bool) -> GatewayError:
    """An upstream error passed on unchanged: its status, its body and its content type (LYRouter: "Errors
    returned by the upstream provider are forwarded unchanged")."""
    media_type = headers.get("content-type") or "application/json"
    passed = passed_headers(headers)
    return GatewayError(
        status,
        "The upstream provider returned an error.",
        type="server_error" if status >= 500 else "invalid_request_error",
        headers=passed,
        raw=RawBody(body, media_type),
        retryable=retryable,
    )


def not_found(path: str) -> GatewayError:
    return GatewayError(404, f"Unknown path {echo(path)}.", type="invalid_request_error")


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
# What a client reads on an error besides its body, passed on from the provider's answer (gateway features, "Rate
# limits": "The provider's rate-limit headers reach the client with their values") and kept by every surface's
# error envelope: the retry hints and the provider's rate-limit headers, and the mark of the gateway's own limit.
_PASSED_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")
_PASSED_NAMES = frozenset({*_RETRY_HEADERS, "x-should-retry", "x-gateway-ratelimited"})
_MAX_MESSAGE = 500


def passed_header(name: str) -> bool:
    """Whether an answer header travels with an error to the client, whichever surface answers it."""
    lowered = name.lower()
    return lowered in _PASSED_NAMES or lowered.startswith(_PASSED_PREFIXES)


def passed_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """The headers of a provider's answer (or a gateway error) that an error passes on (`passed_header`)."""
    return {name.lower(): value for name, value in (headers or {}).items() if passed_header(name)}


def _upstream_message(error: Mapping[str, Any]) -> str:
    message = error.get("message")
    if not isinstance(message, str) or not message:
        return "The upstream provider rejected the request."
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


# Each provider's words for a prompt over the model's context window (Anthropic: "prompt is too long: N tokens >
# M maximum"; OpenAI: code context_length_exceeded; Gemini: "The input token count (N) exceeds the maximum number
# of tokens allowed (M).").
_CONTEXT_WINDOW = re.compile(
    r"prompt is too long|maximum context length|input token count .*exceeds the maximum", re.IGNORECASE
)


def _over_context_window(error: Mapping[str, Any]) -> bool:
    message = error.get("message")
    return error.get("code") == "context_length_exceeded" or (
        isinstance(message, str) and _CONTEXT_WINDOW.search(message) is not None
    )


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
    passed = passed_headers(headers)
    if status == 400 and _over_context_window(error):
        # OpenAI's code for it, the one clients key their trimming on (openai contract, Errors).
        return GatewayError(
            400,
            _upstream_message(error),
            type="invalid_request_error",
            param="messages",
            code="context_length_exceeded",
        )
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


# ------------------------------------------------------------------------------------------- the operator's log
# Why a request failed, noted where the failure happens (the upstream transport, the client's error boundary, the
# layer that answers an error) and written once, as one line, by the request-id layer (web/middleware.py). The
# record lives in a context variable set at the start of each request: tasks a request starts (a stream's pump)
# see the same record, and each request has its own.


@dataclass
class UpstreamFailure:
    """One upstream call that failed: where it went, on which connection, which attempt, after how long."""

    host: str
    path: str
    reused: bool  # a pooled connection that had served an answer before; False: a new connection
    attempt: int  # 1, or 2 for the one resend on a new connection
    elapsed: float  # seconds from the attempt's start to its failure
    exception: str  # the library's exception class
    message: str  # its message (the library's words: a URL without its query, an errno's text)


@dataclass
class Diagnosis:
    """What one request's error line says: the error answered, its cause, the upstream call behind it."""

    error: GatewayError | None = None
    answered: tuple[int, str | None, str | None, str | None] | None = None  # status, type, code, param
    cause: BaseException | None = None
    upstream: UpstreamFailure | None = None
    upstream_status: int | None = None
    # (host, path) of a call the provider answered with an error
    upstream_target: tuple[str, str] | None = None
    resent: UpstreamFailure | None = None  # a first attempt that failed and was sent again


_DIAGNOSIS: ContextVar[Diagnosis | None] = ContextVar("reference_gateway_diagnosis", default=None)


def begin_diagnosis() -> Diagnosis:
    """A new record for the request starting in this context."""
    diagnosis = Diagnosis()
    _DIAGNOSIS.set(diagnosis)
    return diagnosis


def diagnosis() -> Diagnosis | None:
    """This request's record (None outside a request: a test driving a layer directly)."""
    return _DIAGNOSIS.get()


def note_error(error: BaseException) -> None:
    """The exception answered to the client (a `GatewayError`, or an unexpected one answered as a 500)."""
    found = _DIAGNOSIS.get()
    if found is not None:
        if isinstance(error, GatewayError):
            found.error = error
            found.answered = (error.status, error.type, error.code, error.param)
        else:
            found.cause = error


def note_answered(status: int, kind: str | None, code: str | None = None, param: str | None = None) -> None:
    """An error answered by an inbound adapter in its own envelope (no exception to note)."""
    found = _DIAGNOSIS.get()
    if found is not None:
        found.answered = (status, kind, code, param)


def note_upstream(failure: UpstreamFailure, *, resent: bool = False) -> None:
    """An upstream call that failed (`resent`: its first attempt, sent once more)."""
    found = _DIAGNOSIS.get()
    if found is not None:
        if resent:
            found.resent = failure
        else:
            found.upstream = failure


def note_upstream_status(status: int, host: str, path: str) -> None:
    """The provider answered an error status (its body is not kept: it may quote the request)."""
    found = _DIAGNOSIS.get()
    if found is not None:
        found.upstream_status = status
        found.upstream_target = (host, path)
