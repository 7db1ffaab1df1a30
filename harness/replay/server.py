"""Running the replay upstream: a loopback socket, uvicorn on a background thread, or in the foreground."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ipaddress
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette

from harness import paths
from harness.errors import DeliberateDrop
from harness.replay.app import build_app
from harness.replay.client import ReplayClient
from harness.replay.state import ReplayState


class _DropFilter(logging.Filter):
    # uvicorn logs every exception escaping the app; a deliberate drop is not an error.
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DeliberateDrop)


_DROP_FILTER = _DropFilter()


class _HungUpFilter(logging.Filter):
    # asyncio warns when a transport keeps writing after its peer left. For a fake upstream that is the
    # normal end of a gateway hanging up on a stream (client disconnects, size limits), not a problem.
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "socket.send() raised exception."


_HUNG_UP_FILTER = _HungUpFilter()


# Running it


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP. Without it,
    # Nagle holds the body behind the headers until the client's delayed ACK: +40 ms per kept-alive request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # accept (queue) connections as soon as the URL is known, before uvicorn starts
    except OSError:
        sock.close()
        raise
    return sock


def _config(app: Starlette, *, log_level: str, access_log: bool, log_config: Any = None) -> uvicorn.Config:
    logging.getLogger("uvicorn.error").addFilter(_DROP_FILTER)
    logging.getLogger("asyncio").addFilter(_HUNG_UP_FILTER)
    return uvicorn.Config(
        app,
        http="h11",  # the fault injection relies on h11's behaviour when the app aborts mid-body
        ws="none",
        lifespan="off",
        log_config=log_config,
        log_level=log_level,
        access_log=access_log,
        timeout_graceful_shutdown=2,
        # Gateways and the harness keep connections open between rules; uvicorn's 5 s default closes them in
        # the pauses of a busy run, and a request sent as one closes is reset.
        timeout_keep_alive=75,
        server_header=False,  # the served answer is exactly what the cassette and faults say
        date_header=False,
    )


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class ReplayServer:
    """The replay upstream on a background thread with its own event loop.

    >>> with ReplayServer(cassettes_dir) as server:
    ...     server.url  # 'http://127.0.0.1:54321'
    """

    def __init__(
        self, cassettes_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.state = ReplayState(cassettes_dir if cassettes_dir is not None else paths.cassettes_dir())
        self.app = build_app(self.state)
        self.host = host
        self._requested_port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("ReplayServer is not running")
        return self._port

    @property
    def url(self) -> str:
        return _url(self.host, self.port)

    @property
    def images_url(self) -> str:
        return f"{self.url}/__gc/files"

    def start(self, timeout: float = 10.0) -> ReplayServer:
        if self._thread is not None:
            return self
        sock = _bind(self.host, self._requested_port)
        self._port = sock.getsockname()[1]
        server = uvicorn.Server(_config(self.app, log_level="warning", access_log=False))
        self._server = server
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported to start(); a dying thread must not warn in pytest
                failure.append(exc)
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, name=f"replay-upstream:{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"replay upstream did not start on {self.url}: {failure[:1]}")
            time.sleep(0.01)
        atexit.register(self.stop)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout)
        self._server = self._thread = None
        self._port = None
        atexit.unregister(self.stop)

    def client(self) -> ReplayClient:
        """The harness's side of this server's control API, called in this process (no HTTP round trip)."""
        from harness.replay.inprocess import InProcessClient

        return InProcessClient(self.state, self.url)

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_foreground(host: str, port: int) -> tuple[socket.socket, str]:
    """The listening socket and URL for `serve-upstream` (OSError when the address is busy)."""
    sock = _bind(host, port)
    return sock, _url(host, sock.getsockname()[1])


class _ControlFilter(logging.Filter):
    # The harness's control calls (/__gc/…: a case registered, its calls read) are many per rule and say nothing
    # about the gateway: logged at debug only.
    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (len(args) > 2 and str(args[2]).startswith("/__gc/"))


def serve_foreground(
    sock: socket.socket, cassettes_dir: str | Path | None, log_level: str = "warning"
) -> None:
    """Serve on `sock` until Ctrl-C (`gateway-conformance serve-upstream`): quiet by default (warnings and errors);
    at `info`, one line per request the gateway sent; at `debug`, the harness's control calls too."""
    state = ReplayState(cassettes_dir if cassettes_dir is not None else paths.cassettes_dir())
    quiet = log_level not in ("info", "debug", "trace")
    config = _config(
        build_app(state), log_level=log_level, access_log=not quiet, log_config=uvicorn.config.LOGGING_CONFIG
    )
    if log_level != "debug":
        logging.getLogger("uvicorn.access").addFilter(_ControlFilter())
    # uvicorn re-raises the Ctrl-C it already handled gracefully; that is the normal way out.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
