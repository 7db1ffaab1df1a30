"""The upstream client's asyncio network backend (reference_gateway.netio): the same httpcore errors for the same
failures as httpx's own backend, bytes before the end, and a request's writes sent together when it reads."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import ssl
import struct
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest

from reference_gateway import netio
from tests.reference_gateway.conftest import read_request

BACKENDS = [netio.AsyncioBackend, httpcore.AnyIOBackend]  # httpx's own backend: the behaviour to match


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[tuple[int, asyncio.Queue[socket.socket]]]:
    """A listening socket; each accepted connection (a blocking socket) is put on the queue."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    accepted: asyncio.Queue[socket.socket] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    async def accept() -> None:
        while True:
            conn, _ = await loop.sock_accept(listener)
            conn.setblocking(True)
            await accepted.put(conn)

    task = asyncio.ensure_future(accept())
    try:
        yield listener.getsockname()[1], accepted
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        listener.close()


def run(test: Callable[[], Awaitable[None]]) -> None:
    """On asyncio's own loop, and on uvloop (the gateway's loop when installed: its transports differ)."""
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


async def connect(backend: type[httpcore.AsyncNetworkBackend], port: int) -> httpcore.AsyncNetworkStream:
    return await backend().connect_tcp("127.0.0.1", port, timeout=5)


def test_writes_are_sent_together_at_the_next_read() -> None:
    async def body() -> None:
        async with serving() as (port, accepted):
            stream = await connect(netio.AsyncioBackend, port)
            peer = await accepted.get()
            await stream.write(b"POST / HTTP/1.1\r\n\r\n")
            await stream.write(b"body")
            await asyncio.sleep(0.05)
            peer.setblocking(False)
            with pytest.raises(BlockingIOError):
                peer.recv(100)  # nothing sent yet
            peer.setblocking(True)
            reader = asyncio.ensure_future(stream.read(100, timeout=5))
            data = await asyncio.get_running_loop().run_in_executor(None, peer.recv, 100)
            assert data == b"POST / HTTP/1.1\r\n\r\nbody"  # one write
            peer.sendall(b"answer")
            assert await reader == b"answer"
            await stream.aclose()
            peer.close()

    run(body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_then_the_end(backend: type[httpcore.AsyncNetworkBackend]) -> None:
    async def body() -> None:
        async with serving() as (port, accepted):
            stream = await connect(backend, port)
            peer = await accepted.get()
            peer.sendall(b"abcdef")
            peer.close()
            await asyncio.sleep(0.05)
            assert stream.get_extra_info("is_readable") is True
            assert await stream.read(4, timeout=5) == b"abcd"
            assert await stream.read(100, timeout=5) == b"ef"
            assert await stream.read(100, timeout=5) == b""
            await stream.aclose()
            with pytest.raises(httpcore.ReadError):
                await stream.read(100)

    run(body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_timeout(backend: type[httpcore.AsyncNetworkBackend]) -> None:
    async def body() -> None:
        async with serving() as (port, accepted):
            stream = await connect(backend, port)
            peer = await accepted.get()
            assert stream.get_extra_info("is_readable") is False
            with pytest.raises(httpcore.ReadTimeout):
                await stream.read(100, timeout=0.05)
            peer.sendall(b"late")
            assert await stream.read(100, timeout=5) == b"late"  # the stream still works after a timeout
            await stream.aclose()
            peer.close()

    run(body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_is_a_read_error(backend: type[httpcore.AsyncNetworkBackend]) -> None:
    async def body() -> None:
        async with serving() as (port, accepted):
            stream = await connect(backend, port)
            peer = await accepted.get()
            peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            peer.close()  # RST
            await asyncio.sleep(0.05)
            with pytest.raises(httpcore.ReadError):
                await stream.read(100, timeout=5)
            await stream.aclose()

    run(body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_refused_connect(backend: type[httpcore.AsyncNetworkBackend]) -> None:
    async def body() -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))  # bound, not listening: refused
            with pytest.raises(httpcore.ConnectError):
                await connect(backend, s.getsockname()[1])

    run(body)


def test_httpx_over_the_backend_keeps_the_connection() -> None:
    import uvicorn

    clients: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        clients.append(tuple(scope["client"]))
        data = b""
        while True:
            message = await receive()
            data += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [(b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    async def body() -> None:
        clients.clear()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        transport = httpx.AsyncHTTPTransport()
        assert netio.install(transport)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{port}") as client:
            for size in (0, 10, 300_000):  # the last is sent before the read (past the coalescing size)
                response = await client.post("/", content=b"x" * size)
                assert response.status_code == 200
                assert response.content == b"x" * size
        server.should_exit = True
        await task
        assert len(clients) == 3 and len(set(clients)) == 1  # one connection, kept alive

    run(body)


@pytest.mark.skipif(
    shutil.which("openssl") is None, reason="needs the openssl command for a test certificate"
)
def test_https_over_the_backend(tmp_path: Path) -> None:
    """TLS (`start_tls`): answers and streams over https, and a certificate that fails verification is a
    ConnectError, as with httpx's own backend."""
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
        transport = httpx.AsyncHTTPTransport(verify=ssl.create_default_context(cafile=str(cert)))
        assert netio.install(transport)
        async with httpx.AsyncClient(transport=transport) as client:
            response = await client.post(f"https://127.0.0.1:{port}/", content=b"hello" * 20_000)
            assert response.content == b"0:hello1:hello2:hello"
            async with client.stream("POST", f"https://localhost:{port}/", content=b"abc") as streamed:
                assert [chunk async for chunk in streamed.aiter_bytes()] == [b"0:abc", b"1:abc", b"2:abc"]
        untrusted = httpx.AsyncHTTPTransport()
        assert netio.install(untrusted)
        async with httpx.AsyncClient(transport=untrusted) as client:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(f"https://127.0.0.1:{port}/")
        server.should_exit = True
        await task

    run(body)
