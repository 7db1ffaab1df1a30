"""The fuzzer's connection (`harness.fuzz.wire`): what it sends, and what it reports when there is no answer."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from harness.fuzz.wire import Connection

OK = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """A loopback server running `handle(conn)` for each connection it accepts; yields its URL."""
    sockets: list[socket.socket] = []

    def start(handle: Callable[[socket.socket], None]) -> str:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        sockets.append(server)

        def loop() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                sockets.append(conn)
                threading.Thread(target=_quietly, args=(handle, conn), daemon=True).start()

        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{server.getsockname()[1]}/v1/chat/completions"

    yield start
    for sock in sockets:
        sock.close()


def _quietly(handle: Callable[[socket.socket], None], conn: socket.socket) -> None:
    with contextlib.suppress(OSError, StopIteration):  # the test closed the socket, or the client went away
        handle(conn)


def _request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            raise OSError("the client closed the connection")
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += conn.recv(65536)
    return head + b"\r\n\r\n" + rest


def test_it_sends_the_case_bytes_and_only_its_headers_and_reuses_the_connection(serve) -> None:  # type: ignore[no-untyped-def]
    seen: list[bytes] = []
    accepted = []

    def handle(conn: socket.socket) -> None:
        accepted.append(conn)
        while True:
            seen.append(_request(conn))
            conn.sendall(OK)

    url = serve(handle)
    with Connection(url) as client:
        first = client.post(url, b"\xff{not json", {"authorization": "Bearer k"}, 5.0)
        second = client.post(url, b"{}", {"content-type": "text/plain"}, 5.0)
    assert (first.status, first.content_type, first.body) == (400, "application/json", b"{}")
    assert second.status == 400 and len(accepted) == 1
    head, _, body = seen[0].partition(b"\r\n\r\n")
    assert body == b"\xff{not json"
    names = sorted(line.split(b":")[0].lower() for line in head.split(b"\r\n")[1:])
    assert names == [b"authorization", b"content-length", b"host"]  # no content type when the case has none
    assert b"content-type: text/plain" in seen[1]


@pytest.mark.e2e
def test_no_answer_within_the_timeout_is_reported_as_such(serve) -> None:  # type: ignore[no-untyped-def]
    url = serve(lambda conn: (_request(conn), threading.Event().wait(5)))
    with Connection(url) as client:
        answer = client.post(url, b"{}", {}, 0.3)
    assert answer.status == 0 and answer.failure == "no answer within 0.3 s"


def test_a_connection_closed_without_an_answer_fails_and_a_stale_one_is_reopened(serve) -> None:  # type: ignore[no-untyped-def]
    calls = []

    def handle(conn: socket.socket) -> None:
        calls.append(_request(conn))
        if len(calls) == 1:
            conn.sendall(OK)  # answers once, then closes while idle: a stale keep-alive connection
        conn.close()

    url = serve(handle)
    with Connection(url) as client:
        assert client.post(url, b"{}", {}, 5.0).status == 400
        again = client.post(url, b"{}", {}, 5.0)  # stale: sent again on a fresh connection, which closes too
    assert again.status == 0 and again.failure.startswith("the connection failed")
    assert len(calls) == 2  # the stale connection read nothing; the fresh one got the request
