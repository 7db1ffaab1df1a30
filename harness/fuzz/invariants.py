"""What any gateway owes a client sending a hostile body (pure): each invariant has a rule id, the doc sentence it
rests on, and a check of one exchange that yields `InvariantBreach`s (the `harness/checks` convention).

The exchange is what the fuzzer saw: the gateway's status, content type and body (or that it hung), and every
request the upstream received while the gateway handled it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.fuzz.strategies import Case

Level = Literal["MUST", "SHOULD"]
Shape = Literal["envelope", "flat-message", "text-line", "forwarded"]


@dataclass(frozen=True)
class FuzzAnswer:
    status: int  # 0: no answer (hung past the timeout, or the connection failed)
    content_type: str
    body: bytes
    seconds: float
    failure: str = ""  # why there is no answer


@dataclass(frozen=True)
class Exchange:
    case: Case
    answer: FuzzAnswer
    upstream_bodies: Sequence[bytes] | None  # None: the upstream is not observed (no replay tap)


@dataclass(frozen=True)
class InvariantBreach:
    rule_id: str
    message: str


@dataclass(frozen=True)
class Invariant:
    rule_id: str
    level: Level
    title: str
    section: str
    quote: str
    reading: str | None = None


@dataclass(frozen=True)
class ErrorStyle:
    """A profile's error answers: the shapes its doc allows for errors the gateway makes, and the 5xx it
    documents for a client's mistake (LYRouter's unknown model is 503 `no_route_candidate`)."""

    doc: str
    shapes: tuple[Shape, ...]
    envelope_quote: tuple[str, str]  # (section, quote)
    documented_5xx_codes: frozenset[str] = frozenset()
    forwards_upstream_errors: bool = False
    other_content_types_refused: bool = False


STYLES: Mapping[str, ErrorStyle] = {
    "ezat": ErrorStyle(
        doc="ezat-chat-completions",
        shapes=("envelope",),
        envelope_quote=("Errors", "Errors use OpenAI's envelope"),
    ),
    "lyrouter": ErrorStyle(
        doc="lyrouter-chat-completions",
        shapes=("envelope", "flat-message", "text-line"),
        envelope_quote=(
            "Common errors",
            'Error responses take the form `{"error":{"message":"...","type":"...","code":"..."}}`; only some '
            "errors include `code`.",
        ),
        documented_5xx_codes=frozenset({"no_route_candidate"}),
        forwards_upstream_errors=True,
        other_content_types_refused=True,
    ),
    # Relay names no error section; its errors are OpenAI's because the endpoint is "OpenAI-compatible" (a
    # reading, in each invariant's `reading`), and an unknown model or provider failure may be a 5xx.
    "relay": ErrorStyle(
        doc="relay-chat-completions",
        shapes=("envelope",),
        envelope_quote=(
            "Chat completions",
            "OpenAI-compatible, so most SDKs work by changing only the base URL and key.",
        ),
    ),
}


def style_for(profile: str) -> ErrorStyle:
    """The profile's style; a profile not listed (a user's own) is held to OpenAI's envelope and no 5xx, and
    its invariants quote no sentence of its doc (they cite the suite's premise: an OpenAI-compatible endpoint)."""
    return STYLES.get(profile) or ErrorStyle(
        doc=f"{profile}-chat-completions",
        shapes=("envelope",),
        envelope_quote=("(the whole doc)", "an OpenAI-compatible Chat Completions endpoint"),
    )


def invariants(style: ErrorStyle) -> list[Invariant]:
    section, quote = style.envelope_quote
    silent = "the doc does not speak of hostile bodies; "
    return [
        Invariant(
            "robustness/no-5xx-for-client-errors",
            "SHOULD",
            "a malformed or hostile request is a 4xx (or an answer), never a 5xx the doc does not list",
            section,
            quote,
            silent + "a body the gateway cannot use is the client's error, so a 5xx means the gateway broke",
        ),
        Invariant(
            "robustness/error-envelope",
            "MUST",
            "every error answer has the profile's error shape",
            section,
            quote,
        ),
        Invariant(
            "robustness/no-hang",
            "SHOULD",
            "every request is answered within the rule timeout",
            section,
            quote,
            silent + "a refusal costs no upstream time, so it comes back at once",
        ),
        Invariant(
            "robustness/healthy-afterwards",
            "SHOULD",
            "the gateway still answers a plain request after the hostile ones",
            section,
            quote,
            silent + "no request may take the gateway down for the next client",
        ),
        Invariant(
            "robustness/upstream-json-valid",
            "SHOULD",
            "whatever reaches the upstream is valid JSON (finite numbers, UTF-8 without lone surrogates)",
            section,
            quote,
            silent + "RFC 8259 JSON has no NaN or infinity and I-JSON strings are Unicode text",
        ),
        Invariant(
            "robustness/refused-before-upstream",
            "SHOULD",
            "a body the doc refuses (invalid JSON, a refused field, a refused content type) never reaches the upstream",
            section,
            quote,
            "the docs say these are refused with a 400; a refusal made after calling the upstream would still "
            "spend the upstream's tokens",
        ),
    ]


def check(exchange: Exchange, style: ErrorStyle) -> Iterator[InvariantBreach]:
    """Every invariant one exchange breaks."""
    answer = exchange.answer
    upstream = exchange.upstream_bodies
    if answer.status == 0:
        yield InvariantBreach("robustness/no-hang", f"no answer: {answer.failure}")
        return
    if answer.status >= 500:
        code = _error_code(answer.body)
        if code not in style.documented_5xx_codes:
            yield InvariantBreach(
                "robustness/no-5xx-for-client-errors",
                f"HTTP {answer.status} (code {code!r}) for a {exchange.case.kind} body ({exchange.case.note})",
            )
    if answer.status >= 400:
        called = bool(upstream)
        allowed = (*style.shapes, "forwarded") if style.forwards_upstream_errors and called else style.shapes
        if "forwarded" not in allowed and error_shape(answer) not in allowed:
            yield InvariantBreach(
                "robustness/error-envelope",
                f"HTTP {answer.status} {answer.content_type or 'without content type'}: the body is not "
                f"{' or '.join(allowed)}: {answer.body[:120]!r}",
            )
    if upstream is None:
        return
    for i, body in enumerate(upstream):
        problem = json_problem(body)
        if problem is not None:
            yield InvariantBreach("robustness/upstream-json-valid", f"upstream request {i + 1}: {problem}")
    if exchange.case.refused and upstream:
        yield InvariantBreach(
            "robustness/refused-before-upstream",
            f"{len(upstream)} upstream request(s) for a refused {exchange.case.kind} body ({exchange.case.note}); "
            f"the gateway answered {answer.status}",
        )


def _error_code(body: bytes) -> str | None:
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def error_shape(answer: FuzzAnswer) -> Shape | None:
    """Which of the error shapes the answer has, if any."""
    try:
        parsed = json.loads(answer.body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if (
            isinstance(error, dict)
            and isinstance(error.get("message"), str)
            and isinstance(error.get("type"), str)
        ):
            return "envelope"
        if set(parsed) == {"message"} and isinstance(parsed["message"], str):
            return "flat-message"
        return None
    try:
        text = answer.body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.strip() and text.rstrip("\n").count("\n") == 0 and parsed is None:
        return "text-line"
    return None


def json_problem(body: bytes) -> str | None:
    """Why `body` is not strict JSON (RFC 8259 with finite numbers, valid UTF-8), or None."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    def finite(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError(f"{text[:20]} overflows a double")
        return value

    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 ({exc.reason} at byte {exc.start})"
    try:
        value = json.loads(text, parse_constant=constant, parse_float=finite)
    except RecursionError:
        return None  # nested deeper than Python's parser goes; still JSON
    except ValueError as exc:
        return f"not JSON: {str(exc)[:120]}"
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "a string holds a lone surrogate escape"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None
