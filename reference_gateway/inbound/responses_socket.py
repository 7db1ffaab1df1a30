"""OpenAI Responses over a WebSocket: `{base}/responses` upgraded (OpenAI's WebSocket mode guide and WebSocket
events reference; Open Responses specification, "WebSocket Transport") — a transport of the Responses adapter, not
another API. The upgrade is authenticated as a request is (the key in `Authorization: Bearer` or `x-api-key` of the
upgrade request; a refusal is the HTTP error status with OpenAI's envelope, never an accepted socket).

Each `response.create` message is one turn, served exactly as `POST {base}/responses` with the same body and
`stream: true` is (responses.py: the profile's flow through the bridge, or the native pass-through; the store), and
the turn's stream events go back one message each. Turns run one at a time, in the order they came. An error
before the stream began is an in-band `error` event (`{"type": "error", "status", "error": {...}}`, the status and
envelope the HTTP request would have had) and the socket stays open for the next turn.

Connection-local state (socket_memory.py): every response made on the socket is remembered on it, `store: false`
ones included, so `previous_response_id` continues on the open socket; a `store: false` response is known nowhere
else (another socket gets `previous_response_not_found`), and a continuation that fails forgets the response it
continued from. `generate: false` (a warm-up) makes a response without calling the model, to chain from. After 60
minutes a turn is refused with `websocket_connection_limit_reached` and the socket closed, as OpenAI does.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

from reference_gateway.errors import GatewayError, begin_diagnosis, note_answered, note_error, server_error
from reference_gateway.flows.base import Flow
from reference_gateway.inbound import responses_bridge as bridge
from reference_gateway.inbound import responses_native as native
from reference_gateway.inbound import responses_state as state
from reference_gateway.inbound.base import parse_json
from reference_gateway.inbound.socket_memory import Remembered
from reference_gateway.sse import SSEDecoder
from reference_gateway.web.logs import error_fields, log_error, log_request

# "WebSocket connections are limited to 60 minutes" (Open Responses specification, WebSocket Reconnects).
LIMIT_SECONDS = 60 * 60
# Headers of the upgrade that are the WebSocket handshake's own, not the request's.
HANDSHAKE = frozenset(
    {b"upgrade", b"connection", b"sec-websocket-key", b"sec-websocket-version", b"sec-websocket-extensions",
     b"sec-websocket-protocol", b"content-length", b"content-type"}
)  # fmt: skip
FAILED = ("error", "response.failed")
# The HTTP path this transport is served by: responses.py's `_create(flow, request, remembered)`.
Create = Callable[[Flow, Request, Remembered], Awaitable[Response]]


async def serve(flow: Flow, websocket: WebSocket, create: Create) -> None:
    """One WebSocket, from its upgrade to its close."""
    services = flow.services
    try:
        services.intake.authenticate(Request({**websocket.scope, "type": "http", "method": "GET"}))
    except GatewayError as exc:
        await _refuse(websocket, exc)
        return
    await websocket.accept()
    opened = services.hooks.clock()
    memory = Remembered()
    while True:
        try:
            message = await websocket.receive()
        except WebSocketDisconnect:
            return
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            text = bytes(message.get("bytes") or b"").decode("utf-8", errors="replace")
        if services.hooks.clock() - opened > LIMIT_SECONDS:
            await _error_event(websocket, 400, "Responses websocket connection limit reached (60 minutes). "
                               "Create a new websocket connection to continue.",
                               code="websocket_connection_limit_reached")  # fmt: skip
            await websocket.close(1000)
            return
        if not await _turn(flow, websocket, text, memory, create):
            return


async def _turn(flow: Flow, websocket: WebSocket, text: str, memory: Remembered, create: Create) -> bool:
    """One client message answered; False when the socket is gone."""
    event = parse_json(text.encode("utf-8"))
    kind = event.get("type") if isinstance(event, dict) else None
    if not isinstance(event, dict):
        return await _error_event(websocket, 400, "A WebSocket message is a JSON object with a `type`.")
    if kind == "response.processed":  # Codex's acknowledgement of a response it read: nothing to answer
        return True
    if kind != "response.create":
        return await _error_event(
            websocket,
            400,
            f"Unsupported event type {kind!r}: this gateway takes `response.create`.",
            param="type",
        )
    body = {k: v for k, v in event.items() if k not in ("type", "stream", "stream_options", "stream_id")}
    if body.get("background") is True:
        return await _error_event(
            websocket, 400, "background is not supported over WebSocket.", param="background"
        )
    services = flow.services
    request_id = services.hooks.new_request_id()
    diagnosis = begin_diagnosis()
    started, status = time.monotonic(), 101
    try:
        if body.pop("generate", True) is False:
            failed = not await _warm_up(flow, websocket, body, memory)
        else:
            status, failed = await _create(flow, websocket, body, memory, create, request_id)
    except OSError:  # the client went away while its answer was being written
        return False
    finally:
        path = websocket.scope.get("path", "")
        seconds = time.monotonic() - started
        log_request(request_id, "WS", path, status, seconds)
        fields = error_fields(request_id, "WS", path, status, seconds, diagnosis)
        if fields is not None:
            log_error(fields)
    previous = body.get("previous_response_id")
    if failed and isinstance(previous, str):
        memory.forget(previous)  # a failed continuation does not leave stale state behind
    return True


async def _create(
    flow: Flow,
    websocket: WebSocket,
    body: dict[str, Any],
    memory: Remembered,
    create: Create,
    request_id: str,
) -> tuple[int, bool]:
    """The turn served as `POST {base}/responses` with `stream: true`; (its HTTP status, whether it failed)."""
    raw = json.dumps({**body, "stream": True}, ensure_ascii=False).encode("utf-8")
    try:
        answer = await create(flow, _as_request(websocket, raw, request_id), memory)
    except GatewayError as exc:
        note_error(exc)
        await _error_event(websocket, exc.status, exc.message, exc.type, exc.param, exc.code)
        return exc.status, True
    except Exception as exc:  # answered as the HTTP path's catch-all answers: a 500, its cause noted
        note_error(exc)
        internal = server_error()
        note_error(internal)
        await _error_event(
            websocket, internal.status, internal.message, internal.type, internal.param, internal.code
        )
        return internal.status, True
    if isinstance(answer, StreamingResponse) and answer.status_code == 200:
        return 200, await _relay(websocket, answer)
    document = parse_json(bytes(answer.body))
    error = document.get("error") if isinstance(document, dict) else None
    found: dict[str, Any] = error if isinstance(error, dict) else {"message": "upstream error"}
    event: dict[str, Any] = {"type": "error", "status": answer.status_code, "error": _envelope(found)}
    # The HTTP answer's retry hints, where the socket's error event carries headers (openai-python's
    # ResponseWsError.error.headers; Codex reads the event's `headers`).
    hints = {k: v for k, v in answer.headers.items() if k.lower() in ("retry-after", "retry-after-ms")}
    if hints:
        event["headers"] = hints
    await _send(websocket, event)
    return answer.status_code, True


async def _relay(websocket: WebSocket, answer: StreamingResponse) -> bool:
    """The answer's stream events, one message each (keep-alive comments have no place on a socket: its pings do
    that); whether the stream failed."""
    decoder, failed = SSEDecoder(), False
    iterator = answer.body_iterator
    try:
        async for piece in iterator:
            data = piece if isinstance(piece, bytes) else str(piece).encode("utf-8")
            for sse in decoder.feed(data):
                if not sse.data or sse.data.strip() == "[DONE]":
                    continue
                found = parse_json(sse.data.encode("utf-8"))
                failed = failed or (isinstance(found, dict) and found.get("type") in FAILED)
                await websocket.send_text(sse.data)
    except (WebSocketDisconnect, RuntimeError) as exc:
        raise OSError("the client closed the WebSocket") from exc
    finally:
        if hasattr(iterator, "aclose"):
            await iterator.aclose()
    return failed


async def _warm_up(flow: Flow, websocket: WebSocket, body: dict[str, Any], memory: Remembered) -> bool:
    """`generate: false`: a response made without calling the model (no output, no usage), remembered on the
    socket with its input, so the next turn can chain from it."""
    services = flow.services
    previous = body.get("previous_response_id")
    record = None
    if isinstance(previous, str):
        record = memory.recall(previous) or await state.load(services, previous)
        if record is None:
            await _error_event(websocket, 404, f"Previous response with id '{previous}' not found.",
                               param="previous_response_id", code="previous_response_not_found")  # fmt: skip
            return False
    created = int(services.hooks.clock())
    shell = bridge.response_shell(body, bridge.new_id("resp"), str(body.get("model")), created, False)
    done = {**shell, "status": "completed", "completed_at": created, "usage": bridge.usage({})}
    await _send(websocket, {"type": "response.created", "sequence_number": 0, "response": shell})
    await _send(websocket, {"type": "response.completed", "sequence_number": 1, "response": done})
    items = [*(native.history(record) if record is not None else []), *native.input_items(body)]
    memory.remember(done, [], items, native.input_items(body))
    return True


def _as_request(websocket: WebSocket, raw: bytes, request_id: str) -> Request:
    """The turn as the HTTP request it stands for: `POST` to the same path, the upgrade's headers (its key among
    them) without the handshake's, the body, and the turn's own request id."""
    headers = [(k, v) for k, v in websocket.scope["headers"] if k.lower() not in HANDSHAKE]
    headers += [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    scheme = "https" if websocket.scope.get("scheme") == "wss" else "http"
    scope = {**websocket.scope, "type": "http", "method": "POST", "scheme": scheme, "http_version": "1.1",
             "headers": headers, "state": {"request_id": request_id}}  # fmt: skip
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await asyncio.Event().wait()  # the socket's close ends the turn where its answer is written
        return {"type": "http.disconnect"}

    return Request(scope, receive)


async def _refuse(websocket: WebSocket, error: GatewayError) -> None:
    """The upgrade refused with the error's status and OpenAI's envelope (a server without the denial-response
    extension closes before accepting: a 403)."""
    note_error(error)
    answer = state.error(error.status, error.message, error.type, error.param, error.code, error.headers)
    try:
        await websocket.send_denial_response(answer)
    except RuntimeError:
        await websocket.close(1008)


def _envelope(error: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's error object as the SDKs type it: message and type strings, param and code present."""
    return {
        "type": str(error.get("type") or "invalid_request_error"),
        "code": error.get("code") if isinstance(error.get("code"), str) else None,
        "message": str(error.get("message") or ""),
        "param": error.get("param") if isinstance(error.get("param"), str) else None,
    }


async def _error_event(
    websocket: WebSocket,
    status: int,
    message: str,
    kind: str | None = None,
    param: str | None = None,
    code: str | None = None,
) -> bool:
    """An in-band error (the socket stays open); True: the socket is still there."""
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    note_answered(status, kind, code, param)
    error = {"type": kind, "code": code, "message": message, "param": param}
    try:
        await _send(websocket, {"type": "error", "status": status, "error": error})
    except OSError:
        return False
    return True


async def _send(websocket: WebSocket, event: dict[str, Any]) -> None:
    try:
        await websocket.send_text(json.dumps(event, ensure_ascii=False))
    except (WebSocketDisconnect, RuntimeError) as exc:
        raise OSError("the client closed the WebSocket") from exc


__all__ = ["LIMIT_SECONDS", "serve"]
