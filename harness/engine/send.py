"""Sending: the rendered request to the gateway, waiting for the whole answer within the rule's time, and the
exchange collected (both sides, the `then` steps, the gateway key redacted)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from harness import surfaces
from harness.engine import listener as listener_mod
from harness.engine import steps as steps_mod
from harness.engine.render import encode, gateway_url_for, new_marker, render_request, upstream_plan
from harness.engine.socket import Socket, socket_url
from harness.engine.target import Target, uses_nonstream_timeout
from harness.errors import CheckError
from harness.exchange import Exchange, ReceivedResponse, SentRequest, UpstreamCall
from harness.redact import redact_bytes, redact_call, redact_headers, redact_setup_keys
from harness.replay.client import ReplayClient
from harness.spec.model import Rule

MAX_BODY_BYTES = 16 * 1024 * 1024  # read at most this much of an answer; more is reported as truncated


def rule_wait(rule: Rule, target: Target) -> float:
    """How long to wait for the gateway's answer: the rule timeout, plus the declared non-streaming limit for
    a rule whose upstream stays silent past it (so `--nonstream-timeout 590` needs no `--rule-timeout`)."""
    if uses_nonstream_timeout(rule.upstream) and target.nonstream_timeout is not None:
        return target.rule_timeout + target.nonstream_timeout
    return target.rule_timeout


def send(client: httpx.Client, request: SentRequest, timeout: float) -> ReceivedResponse:
    """Send and read the whole answer within `timeout` seconds overall; never raises for gateway faults."""
    started = time.monotonic()
    deadline = started + timeout
    status: int | None = None
    headers: dict[str, str] = {}
    chunks: list[bytes] = []
    arrivals: list[tuple[int, float]] = []
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
                arrivals.append((received, time.monotonic() - started))
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
        arrivals=tuple(arrivals),
    )


class _Sockets:
    """The WebSocket of one rule's exchange (its turns share it), opened on the first turn and closed with the
    exchange; a step that says `connection: new` closes it and opens another."""

    def __init__(self, client: httpx.Client, surface: str) -> None:
        self.client = client
        self.surface = surfaces.surface(surface)
        self.current: Socket | None = None

    def turn(self, request: SentRequest, timeout: float, new: bool) -> tuple[SentRequest, ReceivedResponse]:
        transport = self.surface.transports.get(request.transport)
        if transport is None:
            known = ", ".join(sorted(self.surface.transports)) or "none"
            raise CheckError(
                f"the {self.surface.title} surface has no {request.transport!r} transport (it has: {known})"
            )
        if new or self.current is None:
            self.close()
            self.current = Socket(transport, MAX_BODY_BYTES)
            self.current.open(self.client, request, timeout)
        return self.current.turn(request, timeout)

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None


def _deliver(
    client: httpx.Client, request: SentRequest, timeout: float, sockets: _Sockets, new_socket: bool = False
) -> tuple[SentRequest, ReceivedResponse]:
    """The request sent as its transport carries it: one HTTP request, or a turn on the rule's socket (the request
    as sent then holds the socket's message)."""
    if request.transport == "http":
        return request, send(client, request, timeout)
    return sockets.turn(request, timeout, new_socket)


def _join_headers(items: Sequence[tuple[str, str]]) -> dict[str, str]:
    joined: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    return joined


def exchange_once(
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
    taken = False  # the last look at the case's calls forgets it too (one control call, not two)
    sockets = _Sockets(client, target.surface)

    def upstream_calls(last: bool) -> tuple[UpstreamCall, ...] | None:
        nonlocal taken
        if replay is None or marker is None:
            return None
        taken = last
        return replay.take(marker) if last else replay.calls(marker)

    try:
        with listener_mod.listening(rule.request) as listener:  # `${listener_url}`: the harness's own socket
            rendered = render_request(rule, variant, target, marker)
            if listener is not None:
                body = rendered.body.replace(listener_mod.LISTENER_REF.encode(), listener.url.encode())
                rendered = dataclasses.replace(
                    rendered, body=body, json=listener_mod.fill(rendered.json, listener.url)
                )
            rendered, response = _deliver(client, rendered, rule_wait(rule, target), sockets)
        upstream = upstream_calls(last=not steps)
        first = _exchange(rule, variant, target, rendered, response, upstream, marker, listener)
        followed = []
        for i, step in enumerate(steps):  # `then`: the first request again, with the step's changes merged in
            time.sleep(float(step.get("delay") or 0))
            # `${first.response…}` in the step's request too (a Responses `previous_response_id` names the first answer).
            step = {**step, "request": steps_mod.resolve_first(dict(step.get("request") or {}), first)}
            headers, body_json = steps_mod.step_request(rendered.headers, rendered.json, step, marker)
            again = dataclasses.replace(rendered, headers=headers, json=body_json, body=encode(body_json))
            again = _step_target(again, step, target.gateway_url)
            new_socket = (step.get("request") or {}).get("connection") == "new"
            again, answer = _deliver(client, again, rule_wait(rule, target), sockets, new_socket)
            calls = upstream_calls(last=i == len(steps) - 1)
            followed.append(_exchange(rule, variant, target, again, answer, calls, marker, None))
    finally:
        sockets.close()
        if not taken and replay is not None and marker is not None:
            replay.forget(marker)
    return dataclasses.replace(first, steps=tuple(followed)) if followed else first


def _exchange(
    rule: Rule,
    variant: Mapping[str, Any],
    target: Target,
    rendered: SentRequest,
    response: ReceivedResponse,
    upstream: tuple[UpstreamCall, ...] | None,
    marker: str | None,
    listener: Any,
) -> Exchange:
    """The evidence of one request: the gateway key redacted everywhere (reports are shared)."""
    key = target.gateway_key
    exchange = Exchange(
        rule_id=rule.id,
        variant=dict(variant),
        request=dataclasses.replace(rendered, headers=redact_headers(rendered.headers, key)),
        response=dataclasses.replace(
            response, headers=redact_headers(response.headers, key), raw=redact_bytes(response.raw, key)
        ),
        upstream=None if upstream is None else tuple(redact_call(call, key) for call in upstream),
        marker=marker,
        models={k: v for k, v in target.models.items() if v},
        listener=listener.record() if listener is not None else None,
        surface=target.surface,
        setup=target.setup.declared,
    )
    return redact_setup_keys(exchange, target.setup.keys)


def _step_target(request: SentRequest, step: Mapping[str, Any], gateway_url: str) -> SentRequest:
    """The step's request with its own `method` and `path` (under the gateway's base URL) when it names them (a GET
    or DELETE carries no body), over its own `transport` when it names one: a step that names a method or a path
    goes over HTTP unless it says otherwise; one that names neither keeps the first request's transport."""
    spec = step.get("request") or {}
    method, path = spec.get("method"), spec.get("path")
    transport = spec.get("transport") or ("http" if method or path else request.transport)
    out = request
    if path is not None:
        out = dataclasses.replace(out, url=gateway_url_for(gateway_url, str(path)))
    if transport != request.transport or path is not None:
        http_url = out.url if out.url.startswith("http") else "http" + out.url[2:]  # ws:// -> http://
        url = http_url if transport == "http" else socket_url(http_url)
        out = dataclasses.replace(out, transport=transport, url=url, method="POST")
    if method is not None:
        out = dataclasses.replace(out, method=str(method))
        if method in ("GET", "DELETE"):
            headers = {
                k: v for k, v in out.headers.items() if k.lower() not in ("content-type", "content-length")
            }
            out = dataclasses.replace(out, body=b"", json=None, headers=headers)
    return out
