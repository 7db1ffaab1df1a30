"""Hostile input and unexpected failures (issues 10 and 13): every one answers the profile's envelope, the
log never quotes the body or a key, and the connection stays usable."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from reference_gateway.app import Hooks, create_app
from tests.reference_gateway.conftest import (
    CLIENT_KEY,
    UPSTREAM_KEY,
    FakeAnthropic,
    ServerThread,
    gateway_settings,
)

MODEL = "anthropic/claude-sonnet-5-5"
SECRET_TEXT = "confidential-prompt-7f3a"
AUTH = {"authorization": f"Bearer {CLIENT_KEY}"}


class LogLines(logging.Handler):
    """Every formatted record (tracebacks included) of the gateway's and uvicorn's loggers, one string each."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.records)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    handler = LogLines()
    loggers = [logging.getLogger(name) for name in ("reference_gateway", "uvicorn", "uvicorn.error")]
    saved = [(lg, lg.level) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield handler
    for lg, level in saved:
        lg.removeHandler(handler)
        lg.setLevel(level)


class ExplodingTransport(httpx.AsyncBaseTransport):
    """An upstream transport failing with a bug the gateway does not know, its text quoting secrets."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise RuntimeError(f"bug while sending {request.content!r} with {UPSTREAM_KEY} and {CLIENT_KEY}")


class ExplodingModels(dict[str, Any]):
    def values(self) -> Any:
        raise RuntimeError(f"catalog bug quoting {CLIENT_KEY} and {SECRET_TEXT}")


def exchange_on_one_connection(port: int, requests: list[bytes]) -> list[tuple[int, bytes, bytes]]:
    """Send each raw HTTP/1.1 request on the same socket; (status, headers, body) per answer. A request that
    finds the connection closed has status 0."""
    answers: list[tuple[int, bytes, bytes]] = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        buffer = b""
        for raw in requests:
            try:
                sock.sendall(raw)
            except OSError:
                answers.append((0, b"", b""))
                continue
            while b"\r\n\r\n" not in buffer:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            if b"\r\n\r\n" not in buffer:
                answers.append((0, b"", b""))
                continue
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(buffer) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buffer += chunk
            body, buffer = buffer[:length], buffer[length:]
            answers.append((int(head.split(b" ")[1]), head, body))
    return answers


def post(path: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in {"content-type": "application/json", **AUTH, **(headers or {})}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {CLIENT_KEY}\r\n\r\n".encode()


def chat_body(**fields: Any) -> bytes:
    import json

    body = {"model": MODEL, "messages": [{"role": "user", "content": SECRET_TEXT}], **fields}
    return json.dumps(body).encode()


# ------------------------------------------------------------------------------------ unexpected errors


@pytest.fixture(scope="module")
def exploding_gateway(fake_server: tuple[FakeAnthropic, ServerThread]) -> Iterator[ServerThread]:
    app = create_app(gateway_settings(fake_server[1].url), Hooks(upstream_transport=ExplodingTransport()))
    with ServerThread(app) as server:
        yield server


@pytest.fixture(scope="module")
def exploding_catalog_gateway(fake_server: tuple[FakeAnthropic, ServerThread]) -> Iterator[ServerThread]:
    settings = gateway_settings(fake_server[1].url)
    catalog = replace(settings.catalog, models=ExplodingModels(settings.catalog.models))
    with ServerThread(create_app(replace(settings, catalog=catalog))) as server:
        yield server


def _assert_clean_500(answer: tuple[int, bytes, bytes], log: LogLines) -> None:
    import json

    status, head, body = answer
    assert status == 500
    assert json.loads(body) == {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    assert b"request-id: " in head
    assert any("unexpected RuntimeError" in line for line in log.lines), log.text
    for secret in (SECRET_TEXT, CLIENT_KEY, UPSTREAM_KEY, "bug while sending", "catalog bug"):
        assert secret not in log.text


def test_unexpected_exception_in_a_request_is_a_500_envelope_and_a_clean_log(
    exploding_gateway: ServerThread, log_lines: LogLines
) -> None:
    answers = exchange_on_one_connection(
        exploding_gateway.port, [post("/openai/v1/chat/completions", chat_body()), get("/healthz")]
    )
    _assert_clean_500(answers[0], log_lines)
    assert answers[1][0] == 200, "the 500 dropped the keep-alive connection"


def test_unexpected_exception_outside_the_chat_endpoint_is_never_re_raised(
    exploding_catalog_gateway: ServerThread, log_lines: LogLines
) -> None:
    answers = exchange_on_one_connection(
        exploding_catalog_gateway.port, [get("/api/models"), get("/healthz")]
    )
    _assert_clean_500(answers[0], log_lines)
    assert answers[1][0] == 200, "the 500 dropped the keep-alive connection"
