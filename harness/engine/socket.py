"""Sending over a surface's WebSocket transport (OpenAI Responses' WebSocket mode): the upgrade with the client's
headers, one turn per request on the open socket, and each turn's answer read into the exchange the HTTP path fills.

The upgrade's answer is the exchange's status and headers: 101, or the refusal's status, headers and body (a gateway
that does not serve the transport). A turn's received messages become `ReceivedResponse.raw` in the SSE framing the
HTTP path receives — `event: <the message's type>` and `data: <the message>` — with their arrival times, so the
surface's grammar, accumulation, usage, error and `streamed` checks read both transports alike. A turn ends with the
message the transport says ends it (a terminal event, an `error` event); the socket closing first, or the rule's time
running out, is the turn's transport error, and a turn that got no message at all has no status (as an HTTP request
answered by a reset or by silence).

`websockets` (the client library openai-python's `responses.connect()` itself uses): its synchronous client fits the
runner's threads, reports a refused upgrade with its status, headers and body, and is pulled in already by the
client libraries and uvicorn's WebSocket support.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import ClientConnection, connect

from harness.exchange import SWITCHING_PROTOCOLS, ReceivedResponse, SentRequest
from harness.surfaces.base import Transport

# Headers of the HTTP transport that an upgrade (a GET with no body) does not carry; the library writes its own
# Host, Connection, Upgrade and Sec-WebSocket-* headers.
NOT_ON_UPGRADE = frozenset(
    {"content-type", "content-length", "accept-encoding", "host", "connection", "upgrade"}
)


def socket_url(url: str) -> str:
    """The ws:// (wss://) address of an http:// (https://) endpoint."""
    for http, ws in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(http):
            return ws + url[len(http) :]
    return url


def upgrade_headers(client: httpx.Client, request: SentRequest) -> dict[str, str]:
    """The request's headers as the upgrade sends them, with what the harness's HTTP client adds to every request
    (its request hooks: the mutants' routing header)."""
    built = client.build_request("GET", request.url, headers=dict(request.headers))
    for hook in client.event_hooks.get("request", []):
        hook(built)
    return {k: v for k, v in built.headers.items() if k.lower() not in NOT_ON_UPGRADE}


class Socket:
    """One WebSocket to the gateway for one rule's exchange: the upgrade, then its turns in order."""

    def __init__(self, transport: Transport, max_bytes: int) -> None:
        self.transport = transport
        self.max_bytes = max_bytes  # read at most this much of a turn's answer (the HTTP path's cap)
        self._connection: ClientConnection | None = None
        # The upgrade's answer: the refusal, or the accepted one's status and headers.
        self._upgrade: ReceivedResponse | None = None
        self._closed: str | None = None  # why the socket is gone (the gateway closed it), once it is

    def open(self, client: httpx.Client, request: SentRequest, timeout: float) -> None:
        started = time.monotonic()
        try:
            self._connection = connect(
                request.url,
                additional_headers=upgrade_headers(client, request),
                user_agent_header=None,
                proxy=None,  # as the HTTP client's trust_env=False: loopback, never an environment's proxy
                open_timeout=min(timeout, 10.0),
                ping_interval=None,
                close_timeout=1.0,  # closing is the harness's, not judged: never wait long on it
                compression=None,
                max_size=self.max_bytes,
            )
        except InvalidStatus as exc:
            refusal = exc.response
            self._upgrade = ReceivedResponse(
                status=refusal.status_code,
                headers=_joined(refusal.headers.raw_items()),
                raw=bytes(refusal.body or b""),
                elapsed=time.monotonic() - started,
            )
            return
        except TimeoutError:
            self._upgrade = _failed(
                f"no answer to the WebSocket upgrade within {min(timeout, 10.0):g}s", started
            )
            return
        except (WebSocketException, OSError) as exc:
            self._upgrade = _failed(f"the WebSocket upgrade failed: {type(exc).__name__}: {exc}", started)
            return
        accepted = self._connection.response
        headers = _joined(accepted.headers.raw_items()) if accepted is not None else {}
        self._upgrade = ReceivedResponse(
            SWITCHING_PROTOCOLS, headers, b"", elapsed=time.monotonic() - started
        )

    def turn(self, request: SentRequest, timeout: float) -> tuple[SentRequest, ReceivedResponse]:
        """Send one request as the transport's opening message and read its answer until the turn ends, within
        `timeout` seconds; never raises for the gateway's faults. Returns the request as sent (its message)."""
        message = self.transport.client_event(request.json if isinstance(request.json, Mapping) else {})
        sent = SentRequest(
            "GET", request.url, request.headers, _encode(message), request.json, transport=self.transport.name
        )
        upgrade = self._upgrade or _failed("the WebSocket was never opened", time.monotonic())
        if self._connection is None or upgrade.status != SWITCHING_PROTOCOLS:
            return sent, upgrade
        started = time.monotonic()
        deadline = started + timeout
        framed: list[bytes] = []
        arrivals: list[tuple[int, float]] = []
        received, error, truncated = 0, None, False
        if self._closed is not None:
            error = f"{self._closed}, before this turn was sent"
        else:
            try:
                self._connection.send(sent.body.decode("utf-8"))
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        error = f"no complete answer within the rule timeout of {timeout:g}s"
                        break
                    data = self._connection.recv(timeout=remaining)
                    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
                    frame = sse_frame(text)
                    framed.append(frame)
                    received += len(frame)
                    arrivals.append((received, time.monotonic() - started))
                    if received > self.max_bytes:
                        truncated = True
                        break
                    if self.transport.ends_turn(_decoded(text)):
                        break
            except TimeoutError:
                error = f"no complete answer within the rule timeout of {timeout:g}s"
            except ConnectionClosed as exc:
                self._closed = f"the gateway closed the WebSocket ({_close_reason(exc)})"
                error = f"{self._closed} before the turn ended"
            except WebSocketException as exc:
                error = f"{type(exc).__name__}: {exc}"
        # A turn nothing came back for is no answer at all, as an HTTP request reset or timed out before its
        # status line: the socket's 101 said only that it opened.
        answer = ReceivedResponse(
            status=upgrade.status if framed or error is None else None,
            headers=upgrade.headers,
            raw=b"".join(framed),
            transport_error=error,
            elapsed=time.monotonic() - started,
            truncated=truncated,
            arrivals=tuple(arrivals),
        )
        return sent, answer

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def sse_frame(text: str) -> bytes:
    """One received message in the SSE framing of the HTTP transport: `event:` its JSON's `type` (when it has
    one), `data:` the message itself (one line per line of it)."""
    decoded = _decoded(text)
    kind = decoded.get("type") if isinstance(decoded, dict) else None
    head = f"event: {kind}\n" if isinstance(kind, str) and kind and "\n" not in kind else ""
    data = "".join(f"data: {line}\n" for line in text.split("\n"))
    return f"{head}{data}\n".encode()


def _joined(items: Any) -> dict[str, str]:
    """Header lines as the HTTP path keeps them: lower-case names, a repeated header's values joined."""
    joined: dict[str, str] = {}
    for name, value in items:
        key = str(name).lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else str(value)
    return joined


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _failed(why: str, started: float) -> ReceivedResponse:
    return ReceivedResponse(None, {}, b"", transport_error=why, elapsed=time.monotonic() - started)


def _close_reason(exc: ConnectionClosed) -> str:
    frame = exc.rcvd
    if frame is None:
        return "no close frame"
    return f"code {frame.code}" + (f" {frame.reason!r}" if frame.reason else "")
