"""Builds `Exchange` values from the golden fixtures under tests/fixtures/exchanges/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.exchange import Exchange, ReceivedResponse, SentRequest, ServedAnswer, UpstreamCall

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "exchanges"

SSE_HEADERS = {"content-type": "text/event-stream; charset=utf-8"}
JSON_HEADERS = {"content-type": "application/json"}


def fixture(name: str) -> bytes:
    """A fixture file's bytes, e.g. `sse/text.sse`, `json/error.json`."""
    return (FIXTURES / name).read_bytes()


def request(*, stream: bool = False, include_usage: bool = False, body: Any = None) -> SentRequest:
    if body is None:
        body = {
            "model": "anthropic/claude-sonnet-5-5",
            "messages": [{"role": "user", "content": "[gc:test] hi"}],
        }
        if stream:
            body["stream"] = True
        if include_usage:
            body["stream_options"] = {"include_usage": True}
    raw = json.dumps(body).encode()
    return SentRequest(
        "POST", "http://gateway/v1/chat/completions", {"content-type": "application/json"}, raw, body
    )


def served(name: str, *, status: int = 200) -> ServedAnswer:
    body = fixture(name)
    headers = SSE_HEADERS if name.endswith(".sse") else JSON_HEADERS
    return ServedAnswer(status, headers, body, cassette="test/fixture", interaction=0)


def call(
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    answer: str | None = None,
    raw: bytes | None = None,
) -> UpstreamCall:
    data = raw if raw is not None else json.dumps(body).encode()
    return UpstreamCall(
        "POST",
        "/v1/messages",
        headers or {"content-type": "application/json", "anthropic-version": "2026-10-21"},
        data,
        body if raw is None else None,
        served(answer) if answer else None,
    )


def exchange(
    raw: bytes | str = b"",
    *,
    status: int | None = 200,
    headers: dict[str, str] | None = None,
    stream: bool = False,
    include_usage: bool = False,
    upstream: tuple[UpstreamCall, ...] | None = (),
    answer: str | None = None,
    transport_error: str | None = None,
    companion: Exchange | None = None,
    models: dict[str, str] | None = None,
    body: Any = None,
) -> Exchange:
    """An exchange whose gateway answer is `raw` (bytes, or a fixture name like "sse/text.sse")."""
    if isinstance(raw, str):
        raw = fixture(raw)
    if headers is None:
        headers = SSE_HEADERS if stream else JSON_HEADERS
    if answer is not None:
        upstream = (call({"model": "claude-sonnet-5-5", "max_tokens": 1024, "messages": []}, answer=answer),)
    variant = {"stream": stream}
    return Exchange(
        rule_id="test/checks/case",
        variant=variant,
        request=request(stream=stream, include_usage=include_usage, body=body),
        # the whole body in one read, at once (the runner records each read's arrival)
        response=ReceivedResponse(
            status, headers, raw, transport_error, arrivals=((len(raw), 0.0),) if raw else ()
        ),
        upstream=upstream,
        marker="[gc:test]",
        models=models or {"MODEL": "anthropic/claude-sonnet-5-5"},
        companion=companion,
    )


def stream(name: str, **kwargs: Any) -> Exchange:
    return exchange(f"sse/{name}.sse", stream=True, **kwargs)


def messages(violations: list[Any]) -> str:
    """All violation messages and paths in one string, for `in` assertions with a readable failure."""
    return "\n".join(f"{v.path}: {v.message}" for v in violations)
