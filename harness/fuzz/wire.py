"""The fuzzer's side of the wire: one keep-alive HTTP/1.1 connection to the gateway, on `http.client`.

The fuzz sends one request at a time (so the upstream requests it sees while a case is handled are that case's),
which makes the client's own cost per request part of every example; `http.client` costs about half what
httpx does for the same exchange (measured with benchmarks/bench_fuzz.py's fixed-request baseline). The bytes
on the wire are the case's, with the `authorization` and `content-type` headers only (no content type at all
when the case has none).
"""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlsplit

from harness.fuzz.invariants import FuzzAnswer

# A reused connection the gateway closed while it was idle fails before any answer; the request is sent once
# more on a fresh connection (a request that failed on a fresh connection is reported as it is).
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.BadStatusLine)


class Connection:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port
        self._conn: http.client.HTTPConnection | None = None

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _open(self, timeout: float) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return kind(self._host, self._port, timeout=timeout)

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> FuzzAnswer:
        """POST `body` to `url` (on this connection's host) and read the whole answer, or say why there is none:
        no answer within `timeout`, still answering after it, or the connection failed."""
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        started = time.monotonic()
        reused = self._conn is not None
        for _ in range(2):
            try:
                return self._exchange(path, body, headers, timeout, started)
            except _STALE as exc:
                self.close()
                if not reused:
                    return _none(started, f"the connection failed ({type(exc).__name__})")
                reused = False
            except TimeoutError:
                self.close()
                return _none(started, f"no answer within {timeout:g} s")
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                return _none(started, f"the connection failed ({type(exc).__name__})")
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange(
        self, path: str, body: bytes, headers: dict[str, str], timeout: float, started: float
    ) -> FuzzAnswer:
        if self._conn is None:
            self._conn = self._open(timeout)
        conn = self._conn
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        # skip_accept_encoding: no Accept-Encoding header, as the case's headers say; Host is HTTP/1.1's own
        conn.putrequest("POST", path, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.putheader("content-length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        chunks = []
        while chunk := response.read1(65536):
            chunks.append(chunk)
            if time.monotonic() - started > timeout:
                self.close()
                return _none(started, f"still answering after {timeout:g} s")
        response.close()  # read1 leaves a response of known length "open" at its end; the next request needs it closed
        if response.will_close:
            self.close()
        return FuzzAnswer(
            response.status,
            response.getheader("content-type") or "",
            b"".join(chunks),
            time.monotonic() - started,
        )


def _none(started: float, why: str) -> FuzzAnswer:
    return FuzzAnswer(0, "", b"", time.monotonic() - started, why)
