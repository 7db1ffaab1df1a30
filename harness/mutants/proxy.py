"""The mutating proxy: a loopback ASGI app that forwards to a target and rewrites one thing on the way.

On the client side it sits between the harness and the gateway; on the upstream side between the
gateway and the replay upstream. SSE answers are rewritten event by event as they pass; with no
mutant (or one that leaves the stream alone) the bytes pass through exactly as they came. A WebSocket
(Responses over a socket) is relayed message by message (socket_relay.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import uvicorn

from harness.cassette.bodies import receive_body
from harness.mutants.catalog import Mutant, Side
from harness.mutants.ops.edits import Context, apply_edits
from harness.mutants.ops.events import SseEvent, parse_block, split_sse
from harness.mutants.ops.http import edit_headers, map_status
from harness.mutants.ops.stream import StreamRewriter
from harness.mutants.socket_relay import relay_socket
from harness.outcomes import MARKER_RE_BYTES

HOP_BY_HOP = frozenset(
    {
        "transfer-encoding",
        "connection",
        "keep-alive",
        "content-length",
        "host",
        "date",
        "server",
        "upgrade",
        "te",
        "trailer",
        "proxy-connection",
    }
)
Scope = Mapping[str, Any]
# Which mutant one request runs under, so that many mutants can share the proxies at once: the harness
# sets it on its request, the client-side proxy takes it off (the gateway never sees it) and notes it by
# case marker for the upstream side. An empty value means no mutant; without the header the proxy's own
# `mutant` applies (one mutant at a time, for requests that carry no case marker).
MUTANT_HEADER = "x-gc-mutant"


class ClientBook:
    """The client's requests by case marker, so an upstream-side op can see what the client asked."""

    def __init__(self) -> None:
        self._requests: dict[str, tuple[Any, str | None]] = {}
        self._headers: dict[str, list[tuple[str, str]]] = {}
        self._lock = threading.Lock()

    def note(
        self,
        body: bytes,
        parsed: Any,
        mutant: str | None = None,
        headers: list[tuple[str, str]] | None = None,
    ) -> None:
        m = MARKER_RE_BYTES.search(body)
        if m:
            with self._lock:
                self._requests[m.group(0).decode()] = (parsed, mutant)
                self._headers[m.group(0).decode()] = list(headers or ())
                if len(self._requests) > 4096:  # bounded: a long matrix sends tens of thousands of requests
                    self._headers.pop(next(iter(self._requests)), None)
                    self._requests.pop(next(iter(self._requests)))

    def find(self, body: bytes) -> tuple[Any, str | None]:
        """The client's parsed request for the marker in this body, and the mutant it was sent under."""
        m = MARKER_RE_BYTES.search(body)
        if not m:
            return None, None
        with self._lock:
            return self._requests.get(m.group(0).decode(), (None, None))

    def headers(self, body: bytes) -> list[tuple[str, str]]:
        """The headers the client sent with the request whose marker is in this body."""
        m = MARKER_RE_BYTES.search(body)
        with self._lock:
            return self._headers.get(m.group(0).decode(), []) if m else []


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class _Invalid:
    """Stands for a client body that is not JSON (for `when: {request_json: invalid}`)."""


class MutatingProxy:
    """ASGI app. `mutant` is swapped between catalog runs; None forwards unchanged."""

    def __init__(self, target: str, side: Side, book: ClientBook) -> None:
        self.target = target.rstrip("/")
        self.side = side
        self.book = book
        self.mutant: Mutant | None = None
        self.registry: dict[str, Mutant] = {}  # the mutants a MUTANT_HEADER may name
        self._http: httpx.AsyncClient | None = None

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            limits = httpx.Limits(max_connections=200, max_keepalive_connections=64)
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=10.0), limits=limits, trust_env=False
            )
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        routed = next((v for k, v in headers if k == MUTANT_HEADER), None)
        headers = [(k, v) for k, v in headers if k != MUTANT_HEADER]
        # A WebSocket is a client-side transport only (the gateway calls its providers over HTTP).
        if scope["type"] == "websocket":
            mutant = self.mutant if routed is None else self.registry.get(routed)
            chosen = mutant if mutant is not None and mutant_side(mutant) == "client" else None
            forwarded = [(k, v) for k, v in headers if k not in HOP_BY_HOP]
            await relay_socket(self.target, scope, receive, send, chosen, routed, forwarded, self.book.note)
            return
        body = await receive_body(receive)
        parsed = _parse(body)
        if self.side == "client":
            client: Any = parsed if parsed is not None or not body else _Invalid()
            self.book.note(body, parsed, routed, headers)
        else:
            client, routed = self.book.find(body)
        mutant = self.mutant if routed is None else self.registry.get(routed)
        if mutant is not None and self.side != mutant_side(mutant):
            mutant = None
        ctx = Context(client=client if not isinstance(client, _Invalid) else None)
        path = scope.get("path", "")
        if (
            mutant is not None
            and mutant.request
            and isinstance(parsed, (dict, list))
            and mutant.request_applies(None if isinstance(client, _Invalid) else client, path)
        ):
            new = apply_edits(parsed, mutant.request, ctx)
            if new != parsed or _encoded(new) != _encoded(parsed):  # the second: key order alone changed
                body = _encoded(new)
        if mutant is not None and mutant.connect_image_urls and self.side == "client":
            await _touch_image_hosts(parsed)
        if (
            mutant is not None
            and mutant.request_headers
            and mutant.request_applies(None if isinstance(client, _Invalid) else client, path)
        ):
            sent = self.book.headers(body) if self.side != "client" else []
            headers = edit_headers(headers, mutant.request_headers, sent)
        out_headers = [(k, v) for k, v in headers if k not in HOP_BY_HOP]
        url = self.target + scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        if scope.get("query_string"):
            query = scope["query_string"].decode("latin-1")
            if mutant is not None and mutant.drop_query:  # a gateway that ignores these parameters
                kept = [p for p in query.split("&") if p.split("=", 1)[0] not in mutant.drop_query]
                query = "&".join(kept)
            url += "?" + query if query else ""
        http = self._client()
        try:
            response = await http.send(
                http.build_request(scope["method"], url, headers=out_headers, content=body), stream=True
            )
        except httpx.HTTPError as exc:
            await _answer(send, 502, [("content-type", "text/plain")], f"mutating proxy: {exc!r}".encode())
            return
        try:
            await self._relay(send, response, mutant, client, ctx, path)
        finally:
            await response.aclose()

    async def _relay(
        self,
        send: Any,
        response: httpx.Response,
        mutant: Mutant | None,
        client: Any,
        ctx: Context,
        path: str | None = None,
    ) -> None:
        status = response.status_code
        headers = [(k.lower(), v) for k, v in response.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        is_sse = response.headers.get("content-type", "").startswith("text/event-stream")
        invalid = isinstance(client, _Invalid)
        active = (
            mutant is not None
            and mutant.touches_answer
            and mutant.applies(None if invalid else client, status, invalid_json=invalid, path=path)
        )
        if not active or mutant is None:
            await _start(send, status, headers)
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        ctx = Context(ctx.client, status)
        if mutant.delay:
            await asyncio.sleep(mutant.delay)
        if mutant.replace is not None:
            await response.aread()
            body = json.dumps(mutant.replace.get("body", {})).encode()
            await _answer(
                send, int(mutant.replace.get("status", 500)), [("content-type", "application/json")], body
            )
            return
        if (
            mutant.error_as_stream
            and status >= 400
            and not is_sse
            and isinstance(client, dict)
            and client.get("stream")
        ):
            raw = await response.aread()
            events = [SseEvent.of_data(_parse(raw) or {"error": {}}), SseEvent.of_data("[DONE]")]
            await _answer(
                send, 200, [("content-type", "text/event-stream")], b"".join(e.encode() for e in events)
            )
            return
        if mutant.status:
            status = map_status(status, mutant.status)
        if mutant.headers:
            headers = edit_headers(headers, mutant.headers)
        if is_sse:
            await self._relay_stream(send, response, mutant, status, headers, ctx)
            return
        raw = await response.aread()
        if mutant.json:
            doc = _parse(raw)
            if doc is not None:
                new = apply_edits(doc, mutant.json, ctx)
                if new != doc:
                    raw = json.dumps(new, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        await _answer(send, status, headers, raw)

    async def _relay_decoded(self, send: Any, response: httpx.Response) -> None:
        async for read in response.aiter_raw():
            fixed = read.decode("utf-8", errors="replace").encode("utf-8")
            await send({"type": "http.response.body", "body": fixed, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _relay_stream(
        self,
        send: Any,
        response: httpx.Response,
        mutant: Mutant,
        status: int,
        headers: list[tuple[str, str]],
        ctx: Context,
    ) -> None:
        await _start(send, status, headers)
        if not mutant.touches_stream:
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if mutant.decode_reads:
            await self._relay_decoded(send, response)
            return
        rewriter = StreamRewriter(mutant.chunks, mutant.stream, ctx)
        buffer = b""
        async for chunk in response.aiter_raw():
            blocks, buffer = split_sse(buffer + chunk)
            out = [
                e
                for block in blocks
                if block.strip(b"\n")
                for e in rewriter.feed(parse_block(block.strip(b"\n")))
            ]
            if out:
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"".join(e.encode() for e in out),
                        "more_body": True,
                    }
                )
        tail = rewriter.feed(parse_block(buffer.strip(b"\n"))) if buffer.strip() else []
        tail += rewriter.end()
        await send(
            {"type": "http.response.body", "body": b"".join(e.encode() for e in tail), "more_body": False}
        )


def _encoded(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _image_urls(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [u for k, v in value.items() if k != "image_url" for u in _image_urls(v)]
        image = value.get("image_url")
        if isinstance(image, dict) and isinstance(image.get("url"), str):
            found.append(image["url"])
        return found
    if isinstance(value, list):
        return [u for v in value for u in _image_urls(v)]
    return []


async def _touch_image_hosts(body: Any) -> None:
    """Open (and at once close) a TCP connection to each http(s) image URL's host: the address was touched."""
    for url in _image_urls(body):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            continue
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), 1.0)
        except (OSError, TimeoutError):
            continue
        writer.close()


def mutant_side(mutant: Mutant) -> Side:
    return mutant.side


async def _start(send: Any, status: int, headers: list[tuple[str, str]]) -> None:
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})


async def _answer(send: Any, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
    await _start(send, status, [*headers, ("content-length", str(len(body)))])
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _bind(port: int = 0) -> socket.socket:
    # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY (see harness.replay._bind): without it every
    # kept-alive request through the proxy waits ~40 ms on Nagle and delayed ACKs.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    if port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(256)
    return sock


class ProxyServer:
    """A `MutatingProxy` served by uvicorn on 127.0.0.1 (free port) on a background thread."""

    def __init__(self, target: str, side: Side, book: ClientBook, port: int = 0) -> None:
        self.app = MutatingProxy(target, side, book)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._requested_port = port
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_mutant(self, mutant: Mutant | None) -> None:
        self.app.mutant = mutant

    def register(self, mutants: Sequence[Mutant]) -> None:
        self.app.registry = {m.id: m for m in mutants}

    def start(self, timeout: float = 10.0) -> ProxyServer:
        sock = _bind(self._requested_port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            http="h11",
            ws="websockets-sansio",  # Responses over a WebSocket: harness/mutants/socket_relay.py
            lifespan="off",
            log_level="warning",
            access_log=False,
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)  # a mutant's broken stream is not news
        server = uvicorn.Server(config)
        self._server = server

        async def serve() -> None:
            try:
                await server.serve(sockets=[sock])
            finally:
                await self.app.aclose()  # pooled upstream connections close on this loop, not in __del__

        def run() -> None:
            try:
                asyncio.run(serve())
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, name=f"mutating-proxy:{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mutating proxy did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)
        self._server = self._thread = None

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
