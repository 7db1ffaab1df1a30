"""A loopback TCP listener that counts who connects: the harness's stand-in for an address a gateway must not touch.

A rule names it as `${listener_url}` (e.g. an image URL); the runner opens one per exchange, on a loopback
address other than 127.0.0.1 (where the harness's file server lives, which `loopback-downloads` exempts), and
the `listener` check reads what it saw. Each connection is read for at most a moment and closed without an
answer, so a gateway that connects fails fast instead of hanging the rule.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.exchange import ListenerRecord

LISTENER_REF = "${listener_url}"
# 127.0.0.2 is loopback on Linux without configuration; elsewhere 127.0.0.1 is the fallback.
HOSTS = ("127.0.0.2", "127.0.0.1")


def uses_listener(request: Any) -> bool:
    return LISTENER_REF in json.dumps(request)


class Listener:
    """Accept on a background thread until closed; keep the first bytes of every connection."""

    def __init__(self) -> None:
        self._sock = _bind()
        host, port = self._sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        self._seen: list[bytes] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="gc-listener", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(0.5)
                try:
                    head = conn.recv(512)
                except OSError:
                    head = b""
            with self._lock:
                self._seen.append(head)

    def record(self) -> ListenerRecord:
        with self._lock:
            return ListenerRecord(self.url, tuple(self._seen))

    def close(self) -> ListenerRecord:
        self._closed.set()
        self._thread.join(timeout=2.0)
        self._sock.close()
        return self.record()


def _bind() -> socket.socket:
    last: OSError | None = None
    for host in HOSTS:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((host, 0))
        except OSError as exc:
            sock.close()
            last = exc
            continue
        sock.listen(16)
        sock.settimeout(0.1)
        return sock
    raise OSError(f"no loopback address to listen on: {last}")


@contextmanager
def listening(request: Any) -> Iterator[Listener | None]:
    """A listener while the block runs when `request` names `${listener_url}`, else None."""
    if not uses_listener(request):
        yield None
        return
    listener = Listener()
    try:
        yield listener
    finally:
        listener.close()


def fill(value: Any, url: str) -> Any:
    """`value` with `${listener_url}` replaced in every string (a copy)."""
    if isinstance(value, str):
        return value.replace(LISTENER_REF, url)
    if isinstance(value, dict):
        return {k: fill(v, url) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, url) for v in value]
    return value
