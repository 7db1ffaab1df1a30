"""Run one rule variant against a gateway: render the request, send it, collect both sides, judge.

The pytest items and the CLI both go through `run_rule`; nothing here imports pytest.
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import json
import re
import secrets
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import urljoin, urlsplit

import httpx

from harness import __version__
from harness import listener as listener_mod
from harness import steps as steps_mod
from harness.checks import Violation, run_checks
from harness.errors import HarnessError
from harness.exchange import Exchange, ReceivedResponse, SentRequest, UpstreamCall
from harness.outcomes import FAIL, HARNESS_ERROR, NOT_APPLICABLE, PASS, WARN, OutcomeName
from harness.redact import redact_bytes, redact_call, redact_headers
from harness.replay.client import ReplayClient, ReplayError
from harness.spec.model import RESERVED, ROLE_RE, STREAM_ONLY, UPSTREAM_SIDE_EXPECTATIONS, Rule

MAX_BODY_BYTES = 16 * 1024 * 1024  # read at most this much of an answer; more is reported as truncated
_IMAGES_REF = "${images_url}"
KEEPALIVE_SILENCE_DEFAULT = 25.0


@dataclass(frozen=True)
class Target:
    """Who is judged, and how."""

    gateway_url: str  # the OpenAI base URL, as an SDK takes it (e.g. http://127.0.0.1:8080/openai/v1)
    gateway_key: str | None = None
    models: Mapping[str, str | None] = field(default_factory=dict)  # role → id (None: not available)
    features: frozenset[str] = frozenset()
    upstream_mode: Literal["replay", "live"] = "replay"
    replay_url: str | None = None
    rule_timeout: float = 30.0
    strict: bool = False
    repeat: int = 1  # live mode: each rule variant runs this many times (pass^k; FLAKY)
    # Seconds of upstream silence the keep-alive rules wait out (`$KEEPALIVE_SILENCE` in a rule's upstream
    # plan): 25 by default; a gateway that pings sooner may be declared so (--keepalive-silence).
    keepalive_silence: float = KEEPALIVE_SILENCE_DEFAULT
    # Seconds after which the gateway gives up on a non-streaming request (`--nonstream-timeout`), None when the
    # user did not declare it: `$NONSTREAM_TIMEOUT+N` in a rule's upstream plan is that limit plus N seconds.
    nonstream_timeout: float | None = None
    allow_large_requests: bool = False  # live mode: send request bodies over 1 MB (harness/costguard.py)


@dataclass(frozen=True)
class Outcome:
    rule_id: str
    variant: Mapping[str, Any]
    outcome: OutcomeName
    violations: tuple[Violation, ...] = ()
    reason: str = ""  # why NOT_APPLICABLE / HARNESS_ERROR
    exchange: Exchange | None = None
    duration: float = 0.0
    diagnostics: tuple[Mapping[str, Any], ...] = ()
    live: Mapping[str, Any] | None = None  # live mode: coverage, repeat and tokens (harness/live.py)


def rule_selected(rule: Rule, patterns: Sequence[str]) -> bool:
    """`--rule` globs match the rule id or any alias; no patterns selects everything."""
    if not patterns:
        return True
    names = (rule.id, *rule.aliases)
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in names)


def not_applicable_reason(rule: Rule, target: Target) -> str | None:
    """Why a rule cannot be judged against this target, or None when it can.

    Live mode decides per expectation (harness/live.py), so `needs.replay` does not skip a rule there.
    """
    if _uses_images_url(rule.request) and not target.replay_url:
        return "needs the harness's loopback file server (only available with the replay upstream)"
    missing = sorted(f for f in rule.needs.features if f not in target.features)
    if missing:
        return "needs feature(s) not declared: " + ", ".join(missing) + " (declare with --feature)"
    present = sorted(f for f in rule.needs.without if f in target.features)
    if present:
        return "applies only without feature(s): " + ", ".join(present)
    if uses_nonstream_timeout(rule.upstream) and target.nonstream_timeout is None:
        return (
            "needs the gateway's non-streaming timeout (declare it with --nonstream-timeout S; "
            "EZAT's doc gives 590 s)"
        )
    unsupported = sorted(rule.needs.harness - steps_mod.IMPLEMENTED)
    if unsupported:
        return "this harness cannot run " + ", ".join(unsupported)
    unmapped = sorted(role for role in rule.needs.models if not target.models.get(role))
    if unmapped:
        return "model role(s) not mapped to a model: " + ", ".join(unmapped) + " (see --model-map)"
    return None


def _uses_images_url(value: Any) -> bool:
    return _IMAGES_REF in json.dumps(value)


_NONSTREAM_TIMEOUT_RE = re.compile(r"\$NONSTREAM_TIMEOUT(?:\+(\d+(?:\.\d+)?))?")


def uses_nonstream_timeout(upstream: Any) -> bool:
    return bool(upstream) and "$NONSTREAM_TIMEOUT" in json.dumps(upstream)


def upstream_plan(upstream: Mapping[str, Any] | None, target: Target) -> dict[str, Any] | None:
    """The rule's upstream plan with the gateway's declared parameters filled in: `$KEEPALIVE_SILENCE` (the
    keep-alive silence) and `$NONSTREAM_TIMEOUT+N` (the non-streaming limit plus N seconds)."""
    if not upstream:
        return None

    def replace(text: str) -> Any:
        if text == "$KEEPALIVE_SILENCE":
            return target.keepalive_silence
        whole = _NONSTREAM_TIMEOUT_RE.fullmatch(text)
        if whole is None or target.nonstream_timeout is None:
            return text
        return target.nonstream_timeout + float(whole.group(1) or 0)

    return cast(dict[str, Any], _substitute(dict(upstream), replace))


def rule_wait(rule: Rule, target: Target) -> float:
    """How long to wait for the gateway's answer: the rule timeout, plus the declared non-streaming limit for
    a rule whose upstream stays silent past it (so `--nonstream-timeout 590` needs no `--rule-timeout`)."""
    if uses_nonstream_timeout(rule.upstream) and target.nonstream_timeout is not None:
        return target.rule_timeout + target.nonstream_timeout
    return target.rule_timeout


# --- rendering ------------------------------------------------------------------------------------


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
    models: Mapping[str, str | None], marker: str | None, images_url: str | None, gateway_key: str | None
) -> Any:
    def replace(text: str) -> str:
        if "$" not in text:
            return text
        if images_url is not None:
            text = text.replace(_IMAGES_REF, images_url)
        if "${data_url:" in text:
            text = steps_mod.expand_data_urls(text)

        def role(match: re.Match[str]) -> str:
            name = match.group(1)
            if name == "MARKER":
                return marker or ""
            if name == "GATEWAY_KEY":
                return gateway_key or ""
            return models.get(name) or match.group(0)

        return ROLE_RE.sub(role, text)

    return replace


def _contains_marker_placeholder(value: Any) -> bool:
    return "$MARKER" in json.dumps(value)


def insert_marker(body: Any, marker: str) -> Any:
    """Put the marker at the start of the first user message's text (a copy; the input is not changed).

    No user text: a text part is appended to the first user message (earlier part indexes stay as
    they are); no user message: the first message's text; no messages at all: nothing.
    """
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return body
    out = copy.deepcopy(dict(body))
    messages = out["messages"]
    index = next((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), 0)
    message = messages[index]
    if not isinstance(message, dict):
        return out
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = f"{marker} {content}" if content else marker
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                part["text"] = f"{marker} {part['text']}"
                break
        else:
            content.append({"type": "text", "text": marker})
    elif content is None:
        message["content"] = marker
    return out


def _encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def pad_body(body: Any, size: int) -> bytes:
    """Grow the first user string content with filler until the encoded body is exactly `size` bytes."""
    encoded = _encode(body)
    missing = size - len(encoded)
    if missing <= 0 or not isinstance(body, Mapping):
        return encoded
    out = copy.deepcopy(dict(body))
    for message in out.get("messages", []):
        if isinstance(message, dict) and message.get("role") == "user":
            if isinstance(message.get("content"), str):
                message["content"] += " " + "x" * (missing - 1)
                return _encode(out)
            for part in message.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "text":
                    part["text"] += " " + "x" * (missing - 1)
                    return _encode(out)
    raise ValueError("pad_to_bytes needs a user message with text to grow")


@dataclass(frozen=True)
class RenderedRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    json: Any


def gateway_url_for(base: str, path: str) -> str:
    """`chat/completions` is relative to the OpenAI base URL; `/api/models` is from the host root."""
    if path.startswith("/"):
        parts = urlsplit(base)
        return f"{parts.scheme}://{parts.netloc}{path}"
    return urljoin(base.rstrip("/") + "/", path)


def render_request(
    rule: Rule, variant: Mapping[str, Any], target: Target, marker: str | None
) -> RenderedRequest:
    spec = rule.request
    images_url = f"{target.replay_url.rstrip('/')}/__gc/files" if target.replay_url else None
    replace = _placeholder_replacer(target.models, marker, images_url, target.gateway_key)
    headers = {
        "content-type": "application/json",
        "accept-encoding": "identity",
        "user-agent": f"gateway-conformance/{__version__}",
    }
    if target.gateway_key:
        headers["authorization"] = f"Bearer {target.gateway_key}"
    for name, value in (spec.get("headers") or {}).items():
        if value is None:
            headers.pop(name.lower(), None)
        else:
            headers[name.lower()] = replace(value)
    method = spec.get("method", "POST")
    url = gateway_url_for(target.gateway_url, spec.get("path", "chat/completions"))
    if "raw_body" in spec:
        raw = replace(spec["raw_body"])
        return RenderedRequest(method, url, headers, raw.encode("utf-8"), None)
    if "body" not in spec:
        if method in ("GET", "HEAD", "DELETE", "OPTIONS"):
            headers.pop("content-type", None)
        return RenderedRequest(method, url, headers, b"", None)
    body = spec["body"]
    if isinstance(body, Mapping) and variant:
        body = {**body, **variant}
        if variant.get("stream") is False:
            body.pop("stream_options", None)
    auto_marker = spec.get("marker", "auto") == "auto" and marker is not None
    if auto_marker and not _contains_marker_placeholder(body):
        body = insert_marker(body, marker)  # type: ignore[arg-type]
    body = _substitute(body, replace)
    encoded = pad_body(body, spec["pad_to_bytes"]) if "pad_to_bytes" in spec else _encode(body)
    return RenderedRequest(method, url, headers, encoded, body)


# --- sending --------------------------------------------------------------------------------------


def send(client: httpx.Client, request: RenderedRequest, timeout: float) -> ReceivedResponse:
    """Send and read the whole answer within `timeout` seconds overall; never raises for gateway faults."""
    started = time.monotonic()
    deadline = started + timeout
    status: int | None = None
    headers: dict[str, str] = {}
    chunks: list[bytes] = []
    received = 0
    error: str | None = None
    truncated = False
    try:
        with client.stream(
            request.method,
            request.url,
            headers=request.headers,
            content=request.body if request.body or request.method == "POST" else None,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        ) as response:
            status = response.status_code
            headers = _join_headers(response.headers.multi_items())
            for chunk in response.iter_raw():
                chunks.append(chunk)
                received += len(chunk)
                if received > MAX_BODY_BYTES:
                    truncated = True
                    break
                if time.monotonic() > deadline:
                    error = f"no complete answer within the rule timeout of {timeout:g}s"
                    break
    except httpx.TimeoutException as exc:
        error = f"timed out after {time.monotonic() - started:.1f}s ({type(exc).__name__}; rule timeout {timeout:g}s)"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return ReceivedResponse(
        status=status,
        headers=headers,
        raw=b"".join(chunks),
        transport_error=error,
        elapsed=time.monotonic() - started,
        truncated=truncated,
    )


def _join_headers(items: Sequence[tuple[str, str]]) -> dict[str, str]:
    joined: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    return joined


# --- one rule -------------------------------------------------------------------------------------


def _judge(rule: Rule, violations: Sequence[Violation], strict: bool) -> OutcomeName:
    if not violations:
        return PASS
    if rule.level == "MUST" or strict:
        return FAIL
    return WARN


def _exchange_once(
    rule: Rule,
    variant: Mapping[str, Any],
    target: Target,
    client: httpx.Client,
    replay: ReplayClient | None,
    steps: Sequence[Mapping[str, Any]] = (),
) -> Exchange:
    """Send the rule's request (and its `then` steps, same marker) and collect both sides of each."""
    marker = new_marker(rule.id) if rule.request.get("marker", "auto") == "auto" else None
    if replay is not None and marker is not None:
        replay.register(marker, rule.id, upstream_plan(rule.upstream, target))
    try:
        with listener_mod.listening(rule.request) as listener:  # `${listener_url}`: the harness's own socket
            rendered = render_request(rule, variant, target, marker)
            if listener is not None:
                body = rendered.body.replace(listener_mod.LISTENER_REF.encode(), listener.url.encode())
                rendered = dataclasses.replace(
                    rendered, body=body, json=listener_mod.fill(rendered.json, listener.url)
                )
            response = send(client, rendered, rule_wait(rule, target))
        upstream = replay.calls(marker) if replay is not None and marker is not None else None
        first = _exchange(rule, variant, target, rendered, response, upstream, marker, listener)
        followed = []
        for step in steps:  # `then`: the first rendered request again, with the step's changes merged in
            time.sleep(float(step.get("delay") or 0))
            headers, body_json = steps_mod.step_request(rendered.headers, rendered.json, step, marker)
            again = dataclasses.replace(rendered, headers=headers, json=body_json, body=_encode(body_json))
            answer = send(client, again, rule_wait(rule, target))
            calls = replay.calls(marker) if replay is not None and marker is not None else None
            followed.append(_exchange(rule, variant, target, again, answer, calls, marker, None))
    finally:
        if replay is not None and marker is not None:
            replay.forget(marker)
    return dataclasses.replace(first, steps=tuple(followed)) if followed else first


def _exchange(
    rule: Rule,
    variant: Mapping[str, Any],
    target: Target,
    rendered: RenderedRequest,
    response: ReceivedResponse,
    upstream: tuple[UpstreamCall, ...] | None,
    marker: str | None,
    listener: Any,
) -> Exchange:
    """The evidence of one request: the gateway key redacted everywhere (reports are shared)."""
    key = target.gateway_key
    return Exchange(
        rule_id=rule.id,
        variant=dict(variant),
        request=SentRequest(
            rendered.method, rendered.url, redact_headers(rendered.headers, key), rendered.body, rendered.json
        ),
        response=dataclasses.replace(
            response, headers=redact_headers(response.headers, key), raw=redact_bytes(response.raw, key)
        ),
        upstream=None if upstream is None else tuple(redact_call(call, key) for call in upstream),
        marker=marker,
        models={k: v for k, v in target.models.items() if v},
        listener=listener.record() if listener is not None else None,
    )


def run_rule(
    rule: Rule, variant: Mapping[str, Any], target: Target, client: httpx.Client, replay: ReplayClient | None
) -> Outcome:
    """Run one rule variant and judge it. Harness faults become HARNESS_ERROR, never a gateway FAIL."""
    reason = not_applicable_reason(rule, target)
    if reason is not None:
        return Outcome(rule.id, variant, NOT_APPLICABLE, reason=reason)
    if target.upstream_mode == "live":
        from harness.live import run_live

        return run_live(rule, variant, target, client)
    return run_once(rule, variant, target, client, replay)


def run_once(
    rule: Rule, variant: Mapping[str, Any], target: Target, client: httpx.Client, replay: ReplayClient | None
) -> Outcome:
    """One exchange (and its stream_matches_nonstream companion) judged; no applicability check."""
    started = time.monotonic()
    use_replay = replay if target.upstream_mode == "replay" else None
    wall_started = time.time()  # replay diagnostics carry the (same host) wall time they were made at
    exchange: Exchange | None = None
    try:
        exchange = _exchange_once(rule, variant, target, client, use_replay, rule.then)
        expect = rule.expect_for(variant)
        if expect.get("stream_matches_nonstream") and (variant.get("stream") is True or _body_streams(rule)):
            companion = _exchange_once(rule, {**variant, "stream": False}, target, client, use_replay)
            exchange = dataclasses.replace(exchange, companion=companion)
        violations = (*run_checks(expect, exchange), *_step_violations(rule, variant, exchange))
    except Exception as exc:
        return Outcome(
            rule.id,
            variant,
            HARNESS_ERROR,
            reason=_harness_fault(exc),
            exchange=exchange,
            duration=time.monotonic() - started,
        )
    diagnostics = _new_diagnostics(use_replay, wall_started) if violations else ()
    return Outcome(
        rule.id,
        variant,
        _judge(rule, violations, target.strict),
        violations=violations,
        exchange=exchange,
        duration=time.monotonic() - started,
        diagnostics=diagnostics,
    )


def _step_violations(rule: Rule, variant: Mapping[str, Any], first: Exchange) -> list[Violation]:
    """Each `then` step judged on its own `expect` (stream-only keys dropped for non-stream variants)."""
    out: list[Violation] = []
    stream_only = not variant.get("stream", False) and not _body_streams(rule)
    for i, (step, exchange) in enumerate(zip(rule.then, first.steps, strict=True)):
        expect = steps_mod.resolve_first(dict(step.get("expect") or {}), first)
        if stream_only:
            expect = {k: v for k, v in expect.items() if k not in STREAM_ONLY}
        if exchange.upstream is None:  # live: the upstream side of a step is not observable either
            expect = {k: v for k, v in expect.items() if k not in UPSTREAM_SIDE_EXPECTATIONS}
        out += [steps_mod.label(i, v) for v in run_checks(expect, exchange)]
    return out


def _harness_fault(exc: Exception) -> str:
    """Why a rule is HARNESS_ERROR: a HarnessError's message (the suite's own fault: replay upstream,
    rule data), or for anything else a bug of the suite, with its traceback — never silent."""
    if isinstance(exc, HarnessError):
        where = "replay upstream: " if isinstance(exc, ReplayError) else ""
        return f"{where}{type(exc).__name__}: {exc}"
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return f"internal error (a bug in gateway-conformance) {type(exc).__name__}: {exc}\n{detail}"


def _body_streams(rule: Rule) -> bool:
    body = rule.request.get("body")
    return isinstance(body, Mapping) and body.get("stream") is True


def _new_diagnostics(replay: ReplayClient | None, since: float) -> tuple[Mapping[str, Any], ...]:
    """Replay diagnostics made while this rule ran (fetched only for a failing rule)."""
    if replay is None:
        return ()
    try:
        return tuple(d for d in replay.diagnostics() if float(d.get("at", since)) >= since)
    except ReplayError:
        return ()


def iter_variants(rule: Rule) -> Iterator[dict[str, Any]]:
    yield from rule.variant_combos()


__all__ = [
    "RESERVED",
    "Outcome",
    "OutcomeName",
    "RenderedRequest",
    "Target",
    "gateway_url_for",
    "insert_marker",
    "iter_variants",
    "new_marker",
    "not_applicable_reason",
    "pad_body",
    "render_request",
    "rule_selected",
    "run_once",
    "run_rule",
    "send",
]
