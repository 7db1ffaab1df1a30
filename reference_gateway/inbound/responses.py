"""OpenAI Responses in (`POST {base}/responses`; specs/responses/contract.md).

Every model is bridged through the profile's flow (responses_bridge.py): the request becomes a chat body, the flow
serves it as it serves any chat request (its channels, fallback, refusals, stores), and its completion or chunk
stream comes back as a Response object or Responses events. The flow's errors, and the bridge's own refusals of
what it cannot carry, come back in OpenAI's error envelope with their status.

Stateless: `previous_response_id` is refused with a 400 that says so (a gateway that cannot chain a conversation
must not answer as if it had); `store` is accepted and every response says `store: false`, true of it: no
response can be retrieved later.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from reference_gateway.errors import GatewayError
from reference_gateway.flows.base import Flow
from reference_gateway.inbound import responses_bridge as bridge
from reference_gateway.inbound.base import parse_json, serve_as_chat, translated_stream
from reference_gateway.web.intake import read_body


class Responses:
    name = "responses"

    def routes(self, base: str, flow: Flow) -> list[Route]:
        async def endpoint(request: Request) -> Response:
            try:
                return await _create(flow, request)
            except GatewayError as exc:
                return _error(exc.status, exc.message, exc.type, exc.param, exc.code, exc.headers)

        return [Route(f"{base}/responses", endpoint, methods=["POST"])]


def _error(
    status: int,
    message: str,
    kind: str | None = None,
    param: str | None = None,
    code: str | None = None,
    headers: Any = None,
) -> Response:
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    kept = {k: v for k, v in (headers or {}).items() if k.lower() in ("retry-after", "retry-after-ms")}
    return JSONResponse(body, status_code=status, headers=kept)


async def _create(flow: Flow, request: Request) -> Response:
    services = flow.services
    services.intake.authenticate(request)
    raw = await read_body(request, services.settings.max_body_bytes)
    try:
        body = json.loads(raw)
    except ValueError as exc:
        return _error(400, f"We could not parse the JSON body of your request: {exc}")
    if not isinstance(body, dict):
        return _error(400, "The request body must be a JSON object.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return _error(
            400, "Missing required parameter: 'model'.", param="model", code="missing_required_parameter"
        )
    served = services.settings.catalog.get(body["model"])
    if served is None or not served.channels or not served.enabled:
        # The surface's own answer (OpenAI's): a model this gateway does not serve is 404 model_not_found, whatever
        # the profile's chat flow says of it (LYRouter's chat documents 503; its Responses endpoint is ours).
        return _error(
            404,
            f"The model `{body['model']}` does not exist or you do not have access to it.",
            param="model",
            code="model_not_found",
        )
    if body.get("previous_response_id") is not None:
        return _error(
            400,
            "previous_response_id is not supported: this gateway keeps no responses (send the whole conversation "
            "as input).",
            param="previous_response_id",
            code="unsupported_parameter",
        )
    try:
        chat = bridge.chat_request(body)
    except bridge.BridgeRefusal as exc:
        return _error(400, str(exc), param=exc.param)
    response_id = bridge.new_id("resp")
    answer = await serve_as_chat(flow, request, json.dumps(chat).encode("utf-8"), "/responses")
    if isinstance(answer, StreamingResponse):
        return StreamingResponse(
            _events(answer, body, response_id),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )
    raw_answer = bytes(answer.body)
    document = parse_json(raw_answer)
    if answer.status_code != 200 or not isinstance(document, dict) or "choices" not in document:
        return _passed_error(answer.status_code, document, raw_answer, answer.headers)
    return JSONResponse(bridge.response(document, body, response_id))


def _passed_error(status: int, document: Any, raw: bytes, headers: Any) -> Response:
    """The flow's error in OpenAI's envelope, as the flow gave it (its status, type, param and code)."""
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        return _error(status if status >= 400 else 502, raw.decode("utf-8", "replace") or "upstream error")
    return _error(
        status if status >= 400 else 502,
        str(error.get("message") or "upstream error"),
        error.get("type") if isinstance(error.get("type"), str) else None,
        error.get("param") if isinstance(error.get("param"), str) else None,
        error.get("code") if isinstance(error.get("code"), str) else None,
        headers,
    )


def _events(answer: StreamingResponse, body: dict[str, Any], response_id: str) -> AsyncIterator[bytes]:
    """The flow's chat SSE bytes in, Responses events out (a keep-alive comment passed on as it came)."""
    return translated_stream(answer, bridge.StreamBridge(body, response_id), lambda comment: comment)
