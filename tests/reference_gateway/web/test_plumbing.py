"""The pieces below the app (issue 19): the one SSE loop (batched writes, pings, the context left at the end),
the one retry/fallback loop, the family adapters chosen by data, and the log filter on the handler."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any, get_args

import pytest

from reference_gateway.adapters import ADAPTERS, adapter_for
from reference_gateway.errors import GatewayError, invalid_request, server_error
from reference_gateway.flows.attempts import first_success
from reference_gateway.policy.models import Channel
from reference_gateway.policy.models import Protocol as Family
from reference_gateway.translate.chunks import DONE, StreamItem
from reference_gateway.upstream.client import UpstreamSettings
from reference_gateway.web.logs import ControlEscapes, configure, make_safe
from reference_gateway.web.streaming import Encoded, event_stream

# ------------------------------------------------------------------------------------------- the SSE loop


class Numbers:
    """A chunk source: each event `n` becomes one chunk {"n": n}; the event "end" ends the stream."""

    def __init__(self) -> None:
        self.finished = False

    def feed(self, event: Any) -> list[StreamItem]:
        if event == "end":
            self.finished = True
            return [DONE]
        return [{"n": event}]

    def fail(self, error: GatewayError) -> list[StreamItem]:
        self.finished = True
        return [error.to_envelope()]

    def end_of_stream(self) -> list[StreamItem]:
        return self.fail(server_error("cut short"))


class Opened:
    def __init__(self) -> None:
        self.left = False

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        self.left = True


async def _events(
    items: list[Any], pause_before: int | None = None, pause: float = 0.0
) -> AsyncIterator[Any]:
    for i, item in enumerate(items):
        if i == pause_before:
            await asyncio.sleep(pause)
        yield item


def _serve(events: AsyncIterator[Any], *, ping_interval: float = 10.0) -> tuple[list[bytes], Opened]:
    """The body messages the SSE response sends, and the stream context (was it left?)."""
    opened = Opened()
    response = event_stream(
        opened, events, Encoded(Numbers()), ping_interval=ping_interval, request_id="r", held=(b"held\n\n",)
    )
    writes: list[bytes] = []

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(60)  # the client stays
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message.get("body"):
            writes.append(message["body"])

    asyncio.run(response({"type": "http"}, receive, send))  # type: ignore[arg-type]
    return writes, opened


def test_events_read_together_go_out_in_one_write() -> None:
    writes, opened = _serve(_events([*range(100), "end"]))
    body = b"".join(writes)
    assert body == b"held\n\n" + b"".join(b'data: {"n":%d}\n\n' % n for n in range(100)) + b"data: [DONE]\n\n"
    # 101 events that were all ready: the held bytes, then at most ceil(101 / 64) writes.
    assert len(writes) <= 3, [len(w) for w in writes]
    assert opened.left


@pytest.mark.e2e
def test_a_quiet_upstream_gets_pings_and_a_cut_stream_an_error() -> None:
    writes, opened = _serve(_events([1, 2], pause_before=1, pause=0.3), ping_interval=0.05)
    assert writes[:2] == [b"held\n\n", b'data: {"n":1}\n\n']
    pings = writes[2:-1]
    assert len(pings) >= 2 and set(pings) == {b": ping\n\n"}
    # The last event and the end of the stream (read in the same turn) share the last write.
    assert writes[-1].startswith(b'data: {"n":2}\n\ndata: {"error":') and b"cut short" in writes[-1]
    assert opened.left


# ------------------------------------------------------------------------------------------- retry/fallback


def _transient(name: str) -> GatewayError:
    error = server_error(name)
    error.retryable = True
    return error


@pytest.mark.parametrize(
    ("outcomes", "tries", "served", "tried"),
    [
        ({"a": "ok"}, 1, "a", ["a"]),
        ({"a": "transient", "b": "ok"}, 1, "b", ["a", "b"]),
        ({"a": "transient", "b": "ok"}, 2, "b", ["a", "a", "b"]),
        ({"a": "final", "b": "ok"}, 2, "final", ["a"]),
        ({"a": "transient", "b": "transient"}, 1, "transient-b", ["a", "b"]),
    ],
    ids=[
        "first",
        "next-candidate",
        "retried-then-next",
        "final-failure-at-once",
        "last-failure-is-the-clients",
    ],
)
def test_first_success(outcomes: dict[str, str], tries: int, served: str, tried: list[str]) -> None:
    seen: list[str] = []

    async def attempt(name: str) -> str:
        seen.append(name)
        if outcomes[name] == "transient":
            raise _transient(f"transient-{name}")
        if outcomes[name] == "final":
            raise invalid_request("final")
        return name

    try:
        result = asyncio.run(first_success(list(outcomes), attempt, tries=tries))
    except GatewayError as error:
        result = error.message
    assert (result, seen) == (served, tried)


def test_no_candidates_is_a_server_error() -> None:
    async def attempt(name: str) -> str:
        return name

    with pytest.raises(GatewayError) as caught:
        asyncio.run(first_success([], attempt))
    assert caught.value.status == 500


# ------------------------------------------------------------------------------------------- adapters


def test_every_protocol_of_the_catalog_has_its_adapter() -> None:
    assert set(ADAPTERS) == set(get_args(Family))
    for family in get_args(Family):
        assert adapter_for(Channel(family, "other", "m")).family == family


@pytest.mark.parametrize(
    ("family", "stream", "path", "headers"),
    [
        ("anthropic", False, "/base/v1/messages", {"anthropic-version": "2023-06-01", "x-api-key": "own"}),
        ("anthropic", True, "/base/v1/messages", {"anthropic-version": "2023-06-01", "x-api-key": "own"}),
        ("openai", True, "/base/chat/completions", {"authorization": "Bearer own-openai"}),
        ("gemini", False, "/base/v1beta/models/m:generateContent", {"x-goog-api-key": "own"}),
        ("gemini", True, "/base/v1beta/models/m:streamGenerateContent?alt=sse", {"x-goog-api-key": "own"}),
    ],
    ids=["anthropic", "anthropic-stream", "openai", "gemini", "gemini-stream"],
)
def test_adapter_endpoints(family: Family, stream: bool, path: str, headers: dict[str, str]) -> None:
    channel = Channel(family, "other", "m", "/base/")
    adapter = adapter_for(channel)
    settings = UpstreamSettings("http://upstream.invalid", "own", openai_api_key="own-openai")
    assert adapter.path(channel, stream=stream) == path
    assert adapter.auth_headers(settings) == headers


# ------------------------------------------------------------------------------------------- logs


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.mark.parametrize("name", ["reference_gateway", "reference_gateway.trace", "httpx"])
def test_the_filter_on_the_handler_covers_every_logger(name: str) -> None:
    handler = make_safe(Lines())
    make_safe(handler)  # installed once
    assert sum(isinstance(f, ControlEscapes) for f in handler.filters) == 1
    root = logging.getLogger()
    saved = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        logging.getLogger(name).warning("%s trace=%s", "id", "x\nINJECTED forged\u2028")
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)
    assert handler.lines == ["id trace=x\\u000aINJECTED forged\\u2028"]


def test_configure_makes_the_root_handlers_safe() -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    added = Lines()
    root.addHandler(added)  # basicConfig keeps the handlers a root logger already has
    try:
        configure("warning")
        assert all(any(isinstance(f, ControlEscapes) for f in h.filters) for h in root.handlers)
    finally:
        for handler in root.handlers:
            for f in [f for f in handler.filters if isinstance(f, ControlEscapes)]:
                handler.removeFilter(f)
        root.removeHandler(added)
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
