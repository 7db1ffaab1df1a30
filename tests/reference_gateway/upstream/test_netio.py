"""The upstream client's transport (reference_gateway.upstream.netio): httpx's interface on aiohttp, judged against httpx's
own transport on the same servers — the same bytes on the wire, the same answers, and the same httpx errors for
the same failures."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import shutil
import socket
import ssl
import struct
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_gateway.upstream import netio
from tests.reference_gateway.conftest import read_request


def ours() -> httpx.AsyncBaseTransport:
    return netio.AiohttpTransport()


def theirs() -> httpx.AsyncBaseTransport:
    return httpx.AsyncHTTPTransport()  # httpx's own: the behaviour to match


TRANSPORTS = [pytest.param(ours, id="aiohttp"), pytest.param(theirs, id="httpx")]
Make = Callable[[], httpx.AsyncBaseTransport]


def run(test: Callable[[], Awaitable[None]]) -> None:
    """On asyncio's own loop, and on uvloop (the gateway's loop when installed)."""
    asyncio.run(asyncio.wait_for(test(), 30))
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvicorn[standard] brings it
        return
    loop = uvloop.new_event_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(test(), 30))
    finally:
        loop.close()


@contextlib.asynccontextmanager
async def raw_server(
    answer: Callable[[socket.socket, bytes], None],
) -> AsyncIterator[tuple[int, list[bytes]]]:
    """A server on a plain socket: each connection's request head is kept, and `answer(conn, head)` writes
    whatever it likes (in a thread: a blocking socket)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    heads: list[bytes] = []
    loop = asyncio.get_running_loop()

    def serve(conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, rest = data.split(b"\r\n\r\n", 1)
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(rest) < length:  # the whole request read: a close then is a FIN, not a reset
                more = conn.recv(65536)
                if not more:
                    return
                rest += more
            heads.append(head)
            answer(conn, data)

    async def accept() -> None:
        while True:
            conn, _ = await loop.sock_accept(listener)
            conn.setblocking(True)
            loop.run_in_executor(None, serve, conn)

    task = asyncio.ensure_future(accept())
    try:
        yield listener.getsockname()[1], heads
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        listener.close()


async def post(make: Make, url: str, content: bytes = b"{}", timeout: float = 5.0) -> httpx.Response:
    async with httpx.AsyncClient(transport=make(), timeout=timeout) as client:
        return await client.post(url, content=content, headers={"content-type": "application/json"})


def test_the_same_request_head_as_httpx() -> None:
    def ok(conn: socket.socket, _data: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")

    async def body() -> None:
        async with raw_server(ok) as (port, heads):
            for make in (ours, theirs):
                headers = {"x-api-key": "k", "X-Mixed-Case": "v", "content-type": "application/json"}
                async with httpx.AsyncClient(transport=make()) as client:
                    response = await client.post(
                        f"http://127.0.0.1:{port}/v1/messages?beta=true", content=b'{"a":1}', headers=headers
                    )
                assert response.status_code == 200 and response.json() == {}
        ours_head, theirs_head = heads
        assert ours_head == theirs_head  # every header, its case and its order; nothing added

    run(body)


@pytest.mark.parametrize("make", TRANSPORTS)
def test_an_answer_in_pieces_and_gzip(make: Make) -> None:
    packed = gzip.compress(b'{"ok": true}')

    def pieces(conn: socket.socket, _data: bytes) -> None:
        conn.sendall(b"HTTP/1.1 201 Created\r\nX-Up: 1\r\ncontent-encoding: gzip\r\n")
        conn.sendall(b"transfer-encoding: chunked\r\n\r\n")
        for part in (packed[:5], packed[5:]):
            conn.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        conn.sendall(b"0\r\n\r\n")

    async def body() -> None:
        async with raw_server(pieces) as (port, _heads):
            response = await post(make, f"http://127.0.0.1:{port}/")
            assert response.status_code == 201
            assert response.headers["x-up"] == "1"
            assert response.json() == {"ok": True}  # decoded by httpx.Response, as over httpx's own
            assert response.reason_phrase == "Created"

    run(body)


@pytest.mark.parametrize("make", TRANSPORTS)
def test_refused_connect(make: Make) -> None:
    async def body() -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))  # bound, not listening: refused
            with pytest.raises(httpx.ConnectError):
                await post(make, f"http://127.0.0.1:{s.getsockname()[1]}/")

    run(body)


@pytest.mark.e2e
@pytest.mark.parametrize("make", TRANSPORTS)
def test_read_timeout(make: Make) -> None:
    def silent(conn: socket.socket, _data: bytes) -> None:
        conn.recv(1)  # until the client hangs up

    async def body() -> None:
        async with raw_server(silent) as (port, _heads):
            with pytest.raises(httpx.ReadTimeout):
                await post(make, f"http://127.0.0.1:{port}/", timeout=0.2)

    run(body)


@pytest.mark.e2e
@pytest.mark.parametrize("make", TRANSPORTS)
def test_read_timeout_between_chunks(make: Make) -> None:
    def stalls(conn: socket.socket, _data: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc")
        conn.recv(1)

    async def body() -> None:
        async with (
            raw_server(stalls) as (port, _heads),
            httpx.AsyncClient(transport=make(), timeout=0.2) as client,
            client.stream("POST", f"http://127.0.0.1:{port}/", content=b"x") as response,
        ):
            assert response.status_code == 200
            with pytest.raises(httpx.ReadTimeout):
                await response.aread()

    run(body)


def hangs_up(conn: socket.socket, _data: bytes) -> None:
    conn.close()


def short(conn: socket.socket, _data: bytes) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc")


def resets(conn: socket.socket, _data: bytes) -> None:
    short(conn, _data)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.mark.parametrize("make", TRANSPORTS)
@pytest.mark.parametrize(
    ("server", "errors"),
    [
        pytest.param(hangs_up, httpx.RemoteProtocolError, id="closed-before-the-answer"),
        pytest.param(short, httpx.RemoteProtocolError, id="closed-mid-body"),
        # httpx's own says ReadError, aiohttp's parser an incomplete body: either is a transport error
        pytest.param(resets, (httpx.ReadError, httpx.RemoteProtocolError), id="reset-mid-body"),
    ],
)
def test_a_connection_that_ends_early(
    make: Make, server: Callable[[socket.socket, bytes], None], errors: Any
) -> None:
    async def body() -> None:
        async with raw_server(server) as (port, _heads):
            with pytest.raises(errors):
                await post(make, f"http://127.0.0.1:{port}/")

    run(body)


@pytest.mark.e2e
@pytest.mark.parametrize("make", TRANSPORTS)
def test_bytes_that_arrived_before_the_end_are_read_before_the_error(make: Make) -> None:
    """The client reads only after the data and the end have both arrived (a loaded gateway): the data first,
    then the error (EZAT's mid-stream drop: the events before it, then the error event)."""

    def events_then_cut(conn: socket.socket, _data: bytes) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        time.sleep(0.1)
        conn.sendall(b"".join(b"9\r\ndata: %d\n\n\r\n" % i for i in range(3)) + b"5\r\nda")

    async def body() -> None:
        got = b""
        async with (
            raw_server(events_then_cut) as (port, _heads),
            httpx.AsyncClient(transport=make()) as client,
            client.stream("POST", f"http://127.0.0.1:{port}/", content=b"x") as response,
        ):
            await asyncio.sleep(0.4)  # both have arrived
            with pytest.raises(httpx.RemoteProtocolError):
                async for chunk in response.aiter_bytes():
                    got += chunk
        assert got == b"data: 0\n\ndata: 1\n\ndata: 2\n\nda"

    run(body)


@pytest.mark.e2e
def test_a_connection_is_kept_alive_and_one_left_early_is_closed() -> None:
    import uvicorn

    clients: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        clients.append(tuple(scope["client"]))
        data, _headers = await read_request(scope, receive)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(3 if data in (b"stream", b"slow") else 1):
            await send({"type": "http.response.body", "body": data or b"-", "more_body": True})
            if data == b"slow":
                await asyncio.sleep(0.2)
        await send({"type": "http.response.body", "body": b""})

    async def body() -> None:
        clients.clear()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        async with httpx.AsyncClient(transport=ours(), base_url=f"http://127.0.0.1:{port}") as client:
            for size in (0, 10, 300_000):
                response = await client.post("/", content=b"x" * size)
                assert response.status_code == 200
                assert response.content == (b"x" * size or b"-")
            async with client.stream("POST", "/", content=b"stream") as streamed:
                assert b"".join([chunk async for chunk in streamed.aiter_bytes()]) == b"stream" * 3
            async with client.stream("POST", "/", content=b"slow") as streamed:
                async for _chunk in streamed.aiter_bytes():
                    break  # left before its end: that connection is closed, not pooled
            response = await client.post("/", content=b"after")
            assert response.content == b"after"
        server.should_exit = True
        await task
        assert len(clients) == 6
        assert len(set(clients[:5])) == 1  # one connection, kept alive (a stream read to its end included)
        assert clients[5] != clients[4]  # the stream left early closed its connection: not reused

    run(body)


@pytest.mark.skipif(
    shutil.which("openssl") is None, reason="needs the openssl command for a test certificate"
)
@pytest.mark.e2e
@pytest.mark.parametrize("make", TRANSPORTS)
def test_https(make: Make, tmp_path: Path) -> None:
    """Answers and streams over https, and a certificate that fails verification is a ConnectError."""
    import uvicorn

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    names = "subjectAltName=DNS:localhost,IP:127.0.0.1"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
    ]
    subprocess.run(
        [*command, "-addext", names, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        data, _headers = await read_request(scope, receive)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for i in range(3):
            await send({"type": "http.response.body", "body": b"%d:" % i + data[:5], "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    trusted = ssl.create_default_context(cafile=str(cert))

    def make_trusted() -> httpx.AsyncBaseTransport:
        if make is ours:
            return netio.AiohttpTransport(verify=trusted)
        return httpx.AsyncHTTPTransport(verify=trusted)

    async def body() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", ssl_certfile=str(cert), ssl_keyfile=str(key)
        )
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        async with httpx.AsyncClient(transport=make_trusted()) as client:
            response = await client.post(f"https://127.0.0.1:{port}/", content=b"hello" * 20_000)
            assert response.content == b"0:hello1:hello2:hello"
            async with client.stream("POST", f"https://localhost:{port}/", content=b"abc") as streamed:
                assert b"".join([chunk async for chunk in streamed.aiter_bytes()]) == b"0:abc1:abc2:abc"
        async with httpx.AsyncClient(transport=make()) as client:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(f"https://127.0.0.1:{port}/")
        server.should_exit = True
        await task

    run(body)
