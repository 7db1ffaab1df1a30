"""OpenAI Responses in (`POST {base}/responses`; specs/responses/contract.md).

A model on an OpenAI channel whose upstream serves the Responses API (`responses: true`) is passed through to it
(responses_native.py). Every other model is bridged through the profile's flow (responses_bridge.py): the request becomes a chat body, the flow
serves it as it serves any chat request (its channels, fallback, refusals, stores), and its completion or chunk
stream comes back as a Response object or Responses events. The flow's errors, and the bridge's own refusals of
what it cannot carry, come back in OpenAI's error envelope with their status.

Stateful on the gateway's store (`--state-url`: SQLite by default, Redis for several workers; an in-process
store when none is configured): a response is kept unless the request says `store: false` — the Response, and
the conversation it ends (its input and output as chat messages) — for 30 days. `previous_response_id` continues
that conversation (its instructions are not carried, as OpenAI's are not); an unknown id is 404
`previous_response_not_found`. `GET {base}/responses/{id}` answers a kept Response, `DELETE` forgets it, `GET …/{id}/input_items` lists its
input items.

The same resource upgraded to a WebSocket (responses_socket.py) serves each `response.create` turn through this
path, and `POST {base}/responses/compact` (responses_compact.py) answers a compacted window.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket

from reference_gateway.errors import GatewayError, note_error
from reference_gateway.flows.base import Flow
from reference_gateway.inbound import responses_bridge as bridge
from reference_gateway.inbound import responses_compact, responses_socket, responses_stream
from reference_gateway.inbound import responses_native as native
from reference_gateway.inbound import responses_state as state
from reference_gateway.inbound.base import flow_headers, parse_json, serve_as_chat, translated_stream
from reference_gateway.inbound.socket_memory import Remembered
from reference_gateway.services import Services


class Responses:
    name = "responses"

    def routes(self, base: str, flow: Flow) -> list[BaseRoute]:
        async def endpoint(request: Request) -> Response:
            try:
                return await _create(flow, request)
            except GatewayError as exc:
                note_error(exc)
                return state.error(exc.status, exc.message, exc.type, exc.param, exc.code, exc.headers)

        async def one(request: Request) -> Response:
            try:
                return await _one(flow, request)
            except GatewayError as exc:
                note_error(exc)
                return state.error(exc.status, exc.message, exc.type, exc.param, exc.code, exc.headers)

        async def inputs(request: Request) -> Response:
            try:
                return await _inputs(flow, request)
            except GatewayError as exc:
                note_error(exc)
                return state.error(exc.status, exc.message, exc.type, exc.param, exc.code, exc.headers)

        async def socket(websocket: WebSocket) -> None:  # the same resource upgraded (responses_socket.py)
            await responses_socket.serve(flow, websocket, _create)

        async def compact(request: Request) -> Response:
            try:
                return await responses_compact.compact(flow, request, _passed_error)
            except GatewayError as exc:
                note_error(exc)
                return state.error(exc.status, exc.message, exc.type, exc.param, exc.code, exc.headers)

        return [
            Route(f"{base}/responses", endpoint, methods=["POST"]),
            WebSocketRoute(f"{base}/responses", socket),
            Route(f"{base}/responses/compact", compact, methods=["POST"]),
            Route(f"{base}/responses/{{response_id}}", one, methods=["GET", "DELETE"]),
            Route(f"{base}/responses/{{response_id}}/input_items", inputs, methods=["GET"]),
        ]


async def _kept(flow: Flow, request: Request) -> tuple[str, dict[str, Any] | Response]:
    """The authenticated request's response id, and its kept record or OpenAI's 404 for an id not kept."""
    services = flow.services
    services.intake.authenticate(request)
    response_id = request.path_params["response_id"]
    record = await state.load(services, response_id)
    if record is None:
        return response_id, state.error(
            404, f"Response with id '{response_id}' not found.", param="response_id"
        )
    return response_id, record


async def _one(flow: Flow, request: Request) -> Response:
    """`GET` a kept Response, or `DELETE` it (Responses: Retrieve, Delete a model response)."""
    response_id, record = await _kept(flow, request)
    if isinstance(record, Response):
        return record
    if request.method == "DELETE":
        await state.forget(flow.services, response_id)
        return JSONResponse({"id": response_id, "object": "response", "deleted": True})
    return JSONResponse(record["response"])


async def _inputs(flow: Flow, request: Request) -> Response:
    """`GET` a kept response's input items (Responses: List input items; `order` asc or desc, `limit` 1-100)."""
    _, record = await _kept(flow, request)
    if isinstance(record, Response):
        return record
    order = request.query_params.get("order", "desc")
    try:
        limit = int(request.query_params.get("limit", "20"))
    except ValueError:
        limit = 0
    if order not in ("asc", "desc"):
        return state.error(400, f"Invalid 'order': {order!r}. Expected 'asc' or 'desc'.", param="order")
    if not 1 <= limit <= 100:
        return state.error(400, "Invalid 'limit': an integer from 1 to 100 is expected.", param="limit")
    return JSONResponse(state.listed_inputs(record, order, limit))


async def _create(flow: Flow, request: Request, socket: Remembered | None = None) -> Response:
    """`POST {base}/responses`; `socket`: the responses of the WebSocket this turn came on (responses_socket.py),
    looked up before the store and told of every response made (`store: false` ones included)."""
    services = flow.services
    read = await state.request_object(services, request)
    if isinstance(read, Response):
        return read
    raw, body = read
    if not isinstance(body.get("model"), str) or not body["model"]:
        return state.error(
            400, "Missing required parameter: 'model'.", param="model", code="missing_required_parameter"
        )
    served = services.settings.catalog.get(body["model"])
    if served is None or not served.channels or not served.enabled:
        # The surface's own answer (OpenAI's): a model this gateway does not serve is 404 model_not_found, whatever
        # the profile's chat flow says of it (LYRouter's chat documents 503; its Responses endpoint is ours).
        return state.error(
            404,
            f"The model `{body['model']}` does not exist or you do not have access to it.",
            param="model",
            code="model_not_found",
        )
    if body.get("input") is None:
        # A malformed request on every path, before any provider call (the native one would send a continued
        # conversation on as it is, as if the client had asked nothing new).
        return state.error(
            400, "Missing required parameter: 'input'.", param="input", code="missing_required_parameter"
        )
    history: list[dict[str, Any]] = []
    record: dict[str, Any] | None = None
    previous = body.get("previous_response_id")
    if previous is not None:
        record = socket.recall(str(previous)) if socket is not None else None
        record = record or await state.load(services, str(previous))
        if record is None:
            return state.error(
                404,
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
    channel = served.channels[0]
    if channel.protocol == "openai" and channel.responses:
        remember = socket.remember if socket is not None else None
        return await native.serve(services, request, raw, body, channel, record, remember)
    keep = body.get("store") is not False
    try:
        if record is not None:
            # A conversation the native path kept holds Responses items: worded as chat messages here.
            kept = record.get("conversation")
            history = list(kept) if kept else bridge.input_messages({"input": record.get("items") or []})
        chat = bridge.chat_request(body, history)
        asked = [*history, *bridge.input_messages(body)]
    except bridge.BridgeRefusal as exc:
        return state.error(400, str(exc), param=exc.param)
    response_id = bridge.new_id("resp")
    # The bridge carries the provider's reasoning in its reasoning items (reasoning_items.py): the flow returns the
    # blocks whatever its profile shows chat clients.
    answer = await serve_as_chat(
        flow, request, json.dumps(chat).encode("utf-8"), "/responses", carry_reasoning=True
    )
    if isinstance(answer, StreamingResponse):
        return StreamingResponse(
            _events(answer, body, response_id, services, asked, keep, socket),
            media_type="text/event-stream",
            headers={**flow_headers(answer.headers), "cache-control": "no-cache"},
        )
    raw_answer = bytes(answer.body)
    document = parse_json(raw_answer)
    if answer.status_code != 200 or not isinstance(document, dict) or "choices" not in document:
        return _passed_error(answer.status_code, document, raw_answer, answer.headers)
    response = bridge.response(document, body, response_id, store=keep)
    conversation, inputs = [*asked, *bridge.assistant_turn(response)], native.input_items(body)
    if keep:
        await state.keep(services, response, conversation, inputs=inputs)
    if socket is not None:
        socket.remember(response, conversation, inputs=inputs)
    return JSONResponse(response, headers=flow_headers(answer.headers))


def _passed_error(status: int, document: Any, raw: bytes, headers: Any) -> Response:
    """The flow's error in OpenAI's envelope, as the flow gave it (its status, type, param and code)."""
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return state.error(
            status if status >= 400 else 502, raw.decode("utf-8", "replace") or "upstream error"
        )
    return state.error(
        status if status >= 400 else 502,
        str(error.get("message") or "upstream error"),
        error.get("type") if isinstance(error.get("type"), str) else None,
        error.get("param") if isinstance(error.get("param"), str) else None,
        error.get("code") if isinstance(error.get("code"), str) else None,
        headers,
    )


async def _events(
    answer: StreamingResponse,
    body: dict[str, Any],
    response_id: str,
    services: Services,
    asked: list[dict[str, Any]],
    keep: bool,
    socket: Remembered | None,
) -> AsyncIterator[bytes]:
    """The flow's chat SSE bytes in, Responses events out (a keep-alive comment passed on as it came); the final
    response kept once the stream has ended with it (`asked`: the conversation so far; `keep`: on the store; a
    WebSocket's responses are remembered on it whatever `store` says)."""
    translator = responses_stream.StreamBridge(body, response_id, store=keep)
    async for piece in translated_stream(answer, translator, lambda comment: comment):
        yield piece
    if translator.final is None:
        return
    conversation = [*asked, *bridge.assistant_turn(translator.final)]
    if keep:
        await state.keep(services, translator.final, conversation, inputs=native.input_items(body))
    if socket is not None:
        socket.remember(translator.final, conversation, inputs=native.input_items(body))
