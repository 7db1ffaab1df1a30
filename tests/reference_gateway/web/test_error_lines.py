"""The operator's log (issue 47, 4): every error the gateway answers has one line naming its cause — the request id
the client saw, the status, the upstream call behind it (host, path, a reused or new connection, the attempt, the
time to the failure, the library's exception and message) — and never the body or a key; `--log-format json`
writes the same fields as one JSON object a line."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from reference_gateway.app import create_app
from reference_gateway.web.logs import JSONLines, make_safe
from tests.reference_gateway.conftest import CLIENT_KEY, UPSTREAM_KEY, ServerThread, gateway_settings, message

SECRET_TEXT = "confidential-prompt-91c2"
MODEL = "anthropic/claude-sonnet-5-5"
ANSWER = json.dumps(message()).encode()
OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
    len(ANSWER),
    ANSWER,
)
LIMITED = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
TOO_MANY = (
    b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
    % (
        len(LIMITED),
        LIMITED,
    )
)


class Records(logging.Handler):
    """The gateway's records as JSON documents (the JSON formatter) and as text lines (made safe)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def errors(self) -> list[dict[str, Any]]:
        return [
            json.loads(JSONLines().format(r))
            for r in self.records
            if getattr(r, "fields", {}).get("event") == "error"
        ]


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    make_safe(handler)
    gateway = logging.getLogger("reference_gateway")
    saved = gateway.level
    gateway.addHandler(handler)
    gateway.setLevel(logging.DEBUG)
    yield handler
    gateway.removeHandler(handler)
    gateway.setLevel(saved)


@contextlib.contextmanager
def provider(answer: Callable[[int, int], bytes | None]) -> Iterator[str]:
    """A provider on a blocking socket: `answer(connection no., request no. on it)` is written, or None closes the
    connection after reading the request (a FIN, no answer)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()
    count = [0]

    def serve(conn: socket.socket, number: int) -> None:
        with conn:
            buffered = b""
            on_this = 0
            while True:
                while b"\r\n\r\n" not in buffered:
                    more = conn.recv(65536)
                    if not more:
                        return
                    buffered += more
                head, _, rest = buffered.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(rest) < length:
                    rest += conn.recv(65536)
                buffered = rest[length:]
                on_this += 1
                written = answer(number, on_this)
                if written is None:
                    return
                conn.sendall(written)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            count[0] += 1
            threading.Thread(target=serve, args=(conn, count[0]), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()


@contextlib.contextmanager
def gateway(upstream: str) -> Iterator[httpx.Client]:
    with ServerThread(create_app(gateway_settings(upstream))) as server:
        headers = {"authorization": f"Bearer {CLIENT_KEY}"}
        with httpx.Client(base_url=server.url + "/openai/v1", headers=headers, timeout=10) as client:
            yield client


def chat(client: httpx.Client, **fields: Any) -> httpx.Response:
    body = {"model": MODEL, "messages": [{"role": "user", "content": SECRET_TEXT}], **fields}
    return client.post("/chat/completions", json=body)


def _clean(records: Records) -> None:
    text = "\n".join(r.getMessage() for r in records.records) + json.dumps(records.errors())
    for secret in (SECRET_TEXT, CLIENT_KEY, UPSTREAM_KEY):
        assert secret not in text


def test_an_unreachable_provider_names_the_failed_call(records: Records) -> None:
    with provider(lambda _n, _on: None) as upstream, gateway(upstream) as client:
        answer = chat(client)
    assert answer.status_code == 500
    (line,) = records.errors()
    port = upstream.rsplit(":", 1)[1]
    assert line["request_id"] == answer.headers["x-request-id"]
    assert line["level"] == "error"
    assert (line["status"], line["method"], line["path"]) == (500, "POST", "/openai/v1/chat/completions")
    assert line["cause"] == "ServerDisconnectedError: Server disconnected"
    assert (line["upstream_host"], line["upstream_path"]) == (f"127.0.0.1:{port}", "/v1/messages")
    assert (line["connection"], line["attempt"]) == ("new", 1)
    assert isinstance(line["time_to_failure_ms"], float) and line["time_to_failure_ms"] >= 0
    assert line["error_type"] == "server_error"
    _clean(records)


def test_a_resent_request_that_fails_again_names_both_attempts(records: Records) -> None:
    # The first connection answers its first request and keeps it; then every request is closed unanswered: the
    # next request meets the pooled connection closed (attempt 1, reused), is resent on a new one (attempt 2).
    with provider(lambda n, on: OK if (n, on) == (1, 1) else None) as upstream, gateway(upstream) as client:
        assert chat(client).status_code == 200
        answer = chat(client, stream=True)
    assert answer.status_code == 500
    (line,) = records.errors()
    assert line["request_id"] == answer.headers["request-id"]
    assert (line["connection"], line["attempt"]) == ("new", 2)
    assert line["first_attempt"] == "ServerDisconnectedError: Server disconnected"
    _clean(records)


def test_a_provider_error_status_names_the_provider_not_its_body(records: Records) -> None:
    with provider(lambda _n, _on: TOO_MANY) as upstream, gateway(upstream) as client:
        answer = chat(client)
    assert answer.status_code == 429
    (line,) = records.errors()
    assert line["level"] == "warning"
    assert line["cause"] == "the provider answered 429"
    assert line["upstream_path"] == "/v1/messages"
    assert (line["error_type"], line["code"]) == ("rate_limit_error", "rate_limit_exceeded")
    assert "slow down" not in json.dumps(line)


def test_a_refusal_names_what_the_gateway_refused(records: Records) -> None:
    with provider(lambda _n, _on: OK) as upstream, gateway(upstream) as client:
        nested: Any = SECRET_TEXT
        for _ in range(200):
            nested = [nested]
        answer = chat(client, metadata=nested)
    assert answer.status_code == 400
    (line,) = records.errors()
    assert line["cause"] == "BodyError: it is nested more than 128 levels deep"
    assert "upstream_host" not in line
    _clean(records)


def test_the_text_line_has_the_same_fields_as_key_value_pairs(records: Records) -> None:
    with provider(lambda _n, _on: None) as upstream, gateway(upstream) as client:
        answer = chat(client)
    (record,) = [r for r in records.records if getattr(r, "fields", {}).get("event") == "error"]
    text = record.getMessage()
    assert text.startswith(f"event=error request_id={answer.headers['x-request-id']} method=POST ")
    assert 'cause="ServerDisconnectedError: Server disconnected"' in text
    assert "connection=new attempt=1 " in text


def test_a_success_has_no_error_line(records: Records) -> None:
    with provider(lambda _n, _on: OK) as upstream, gateway(upstream) as client:
        assert chat(client).status_code == 200
    assert records.errors() == []
    (access,) = [r for r in records.records if getattr(r, "fields", {}).get("event") == "request"]
    assert json.loads(JSONLines().format(access))["status"] == 200
