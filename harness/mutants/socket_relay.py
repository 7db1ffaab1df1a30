"""The mutating proxy's WebSocket passthrough (Responses over a WebSocket): the client's upgrade forwarded with its
headers to the target, then every message relayed both ways, one mutant applied on the way.

The client's messages (each `response.create`) are noted by case marker like HTTP request bodies, so an upstream-side
mutant sees what the client asked and its upgrade's headers, and take the mutant's request edits. The gateway's
messages are the stream's events, one each: they pass the mutant's chunk edits and stream ops as SSE events do over
HTTP, one turn at a time (a turn ends with the message the Responses transport ends a turn with). Two mutations
exist only here: `upgrade` refuses the upgrade with a status and body (a route that does not take it), and
`socket.close_after_turns` closes the socket once that many turns have ended (a gateway that drops it); `status`
maps the status of an upgrade the gateway refused. `when.transport: websocket` keeps a mutant to sockets.
With no mutant the messages pass as they came.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from harness.mutants.catalog import Mutant
from harness.mutants.ops.edits import Context, apply_edits
from harness.mutants.ops.events import SseEvent
from harness.mutants.ops.http import edit_headers, map_status
from harness.mutants.ops.stream import StreamRewriter
from harness.surfaces.responses.websocket import ends_turn

# Headers of the client's handshake that are the connection's own: the proxy's client writes its own.
HANDSHAKE = frozenset({"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"})
Note = Callable[[bytes, Any, str | None, list[tuple[str, str]]], None]  # ClientBook.note


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


async def relay_socket(
    target: str,
    scope: Any,
    receive: Any,
    send: Any,
    mutant: Mutant | None,
    routed: str | None,
    headers: list[tuple[str, str]],
    note: Note,
) -> None:
    """One client socket relayed to `target` (http(s)://host:port) under `mutant` (client side), or as it came."""
    if (await receive())["type"] != "websocket.connect":
        return
    path = scope.get("path", "")
    if mutant is not None and not mutant.on_socket(path):
        mutant = None  # gated off this socket (`when.path`, `when.transport`)
    if mutant is not None and mutant.upgrade is not None:
        body = json.dumps(mutant.upgrade.get("body") or {}).encode()
        await _deny(send, int(mutant.upgrade.get("status", 404)), body)
        return
    forwarded = [(k, v) for k, v in headers if k not in HANDSHAKE]
    if mutant is not None and mutant.request_headers:
        forwarded = edit_headers(forwarded, mutant.request_headers, [])
    url = "ws" + target[4:] + scope.get("raw_path", scope["path"].encode()).decode("latin-1")
    if scope.get("query_string"):
        url += "?" + scope["query_string"].decode("latin-1")
    try:
        gateway = await connect(
            url, additional_headers=forwarded, user_agent_header=None, proxy=None, open_timeout=10,
            ping_interval=None, compression=None, max_size=None,
        )  # fmt: skip
    except (
        InvalidStatus
    ) as exc:  # the gateway's own refusal, passed on (its status mapped by the mutant's `status`)
        refusal = exc.response
        status = (
            map_status(refusal.status_code, mutant.status)
            if mutant and mutant.status
            else refusal.status_code
        )
        await _deny(send, status, bytes(refusal.body or b""), list(refusal.headers.raw_items()))
        return
    except (WebSocketException, OSError) as exc:
        await _deny(send, 502, f"mutating proxy: {exc!r}".encode())
        return
    await send({"type": "websocket.accept"})
    asked: list[Any] = [None]  # the client's latest message: what the mutant's gates and edits read
    upward = asyncio.ensure_future(_from_client(receive, gateway, mutant, routed, forwarded, note, asked))
    try:
        await _from_gateway(gateway, send, mutant, asked)
    finally:
        upward.cancel()
        await gateway.close()


async def _from_client(
    receive: Any,
    gateway: ClientConnection,
    mutant: Mutant | None,
    routed: str | None,
    headers: list[tuple[str, str]],
    note: Note,
    asked: list[Any],
) -> None:
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            await gateway.close()
            return
        text = message.get("text")
        if text is None:
            text = bytes(message.get("bytes") or b"").decode("utf-8", errors="replace")
        parsed = _parse(text)
        asked[0] = parsed
        note(text.encode("utf-8"), parsed, routed, headers)
        edits = mutant.request if mutant is not None and mutant.side == "client" else ()
        if (
            mutant is not None
            and edits
            and isinstance(parsed, (dict, list))
            and mutant.request_applies(parsed, transport="websocket")
        ):
            edited = apply_edits(parsed, edits, Context(client=parsed))
            if edited != parsed:
                text = json.dumps(edited, ensure_ascii=False, separators=(",", ":"))
        try:
            await gateway.send(text)
        except ConnectionClosed:
            return


async def _from_gateway(
    gateway: ClientConnection, send: Any, mutant: Mutant | None, asked: list[Any]
) -> None:
    rewrites = mutant is not None and mutant.side == "client" and bool(mutant.chunks or mutant.stream)
    limit = int((mutant.socket or {}).get("close_after_turns") or 0) if mutant is not None else 0
    rewriter: StreamRewriter | None = None
    turns = 0
    try:
        async for data in gateway:
            text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
            decoded = _parse(text)
            # A turn's first event: the mutant gated for this turn as for a request.
            starts = rewriter is None and rewrites and mutant is not None
            if starts and mutant is not None and mutant.applies(asked[0], 101, transport="websocket"):
                rewriter = _rewriter(mutant, asked[0])
            if rewriter is None:
                await send({"type": "websocket.send", "text": text})
            else:
                kind = decoded.get("type") if isinstance(decoded, dict) else None
                event = SseEvent(((f"event: {kind}",) if isinstance(kind, str) else ()) + (f"data: {text}",))
                out = rewriter.feed(event)
                ended = ends_turn(decoded if decoded is not None else text)
                if ended:
                    out += rewriter.end()
                    rewriter = None
                for ev in out:
                    if ev.data is not None:
                        await send({"type": "websocket.send", "text": ev.data})
                if ended and not any(
                    ends_turn(_parse(ev.data) or ev.data) for ev in out if ev.data is not None
                ):
                    # The turn's end was cut away: the socket closes, as an HTTP stream's connection would end,
                    # rather than leave the client waiting on its idle timeout.
                    await send({"type": "websocket.close", "code": 1011})
                    return
            if ends_turn(decoded if decoded is not None else text):
                turns += 1
                if limit and turns >= limit:
                    await send({"type": "websocket.close", "code": 1000})
                    return
    except ConnectionClosed:
        pass
    await send({"type": "websocket.close", "code": 1000})


def _rewriter(mutant: Mutant, client: Any) -> StreamRewriter:
    return StreamRewriter(mutant.chunks, mutant.stream, Context(client, 101))


async def _deny(send: Any, status: int, body: bytes, headers: list[tuple[str, str]] | None = None) -> None:
    """The upgrade answered with an HTTP status and body (the ASGI WebSocket denial response)."""
    kept = [
        (k.lower(), v) for k, v in headers or [] if k.lower() not in ("content-length", "transfer-encoding")
    ]
    if not any(k == "content-type" for k, _ in kept):
        kept.append(("content-type", "application/json"))
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in [*kept, ("content-length", str(len(body)))]]
    await send({"type": "websocket.http.response.start", "status": status, "headers": raw})
    await send({"type": "websocket.http.response.body", "body": body})
