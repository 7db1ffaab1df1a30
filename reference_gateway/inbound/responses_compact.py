"""`POST {base}/responses/compact` (OpenAI API reference: Responses > Compact a response; Open Responses
specification, "WebSocket Compaction"): a conversation — `input`, after the response `previous_response_id` names
when it gives one — compacted into a window a client starts its next response from (`object:
"response.compaction"`, its `output` the user messages as they were and one `compaction` item, compaction.py).

The summary the compaction item carries is written by the model, asked through the model's own path as
`/responses` asks it: the profile's flow through the bridge, or the Responses channel's provider passed the
request (`store: false`, not streamed). The conversation's items reach it as they would reach it in a response
(this gateway's earlier compaction items opened), then the request for the summary as the last user message;
the client's `instructions` guide it. The answer's usage is the compaction's. A request without `model` is 400, an
unknown model 404, a provider's error passed on with its status, as `/responses` does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from reference_gateway.flows.base import Flow
from reference_gateway.inbound import compaction
from reference_gateway.inbound import responses_bridge as bridge
from reference_gateway.inbound import responses_native as native
from reference_gateway.inbound import responses_state as state
from reference_gateway.inbound.base import parse_json, serve_as_chat
from reference_gateway.inbound.messages import respell_model
from reference_gateway.upstream.client import Endpoint

# A provider's error answer (status, parsed document, raw bytes, headers) in OpenAI's envelope (responses.py).
PassedError = Callable[[int, Any, bytes, Any], Response]


async def compact(flow: Flow, request: Request, passed_error: PassedError) -> Response:
    services = flow.services
    read = await state.request_object(services, request)
    if isinstance(read, Response):
        return read
    _, body = read
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return state.error(
            400, "Missing required parameter: 'model'.", param="model", code="missing_required_parameter"
        )
    served = services.settings.catalog.get(model)
    if served is None or not served.channels or not served.enabled:
        return state.error(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            param="model",
            code="model_not_found",
        )
    items: list[Any] = []
    previous = body.get("previous_response_id")
    if previous is not None:
        record = await state.load(services, str(previous))
        if record is None:
            return state.error(
                404,
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        items += native.history(record)
    items += native.input_items(body)
    if not items:
        return state.error(
            400, "Nothing to compact: give `input` or a `previous_response_id`.", param="input"
        )
    ask: dict[str, Any] = {
        "model": model,
        "input": [*compaction.expanded(items), {"role": "user", "content": compaction.SUMMARY_PROMPT}],
        "store": False,
    }
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        ask["instructions"] = body["instructions"]
    channel = served.channels[0]
    if channel.protocol == "openai" and channel.responses:
        found = await _ask_native(flow, request, ask, channel.upstream, channel.base_path)
    else:
        found = await _ask_bridged(flow, request, ask)
    if isinstance(found, _Failed):
        return passed_error(found.status, parse_json(found.body), found.body, found.headers)
    summary, usage = found
    return JSONResponse({
        "id": bridge.new_id("resp"), "object": "response.compaction",
        "created_at": int(services.hooks.clock() or time.time()),
        "output": compaction.window(items, summary), "usage": usage,
    })  # fmt: skip


@dataclass(frozen=True)
class _Failed:
    """The model's path answered an error: its status, body and headers, passed on to the client."""

    status: int
    body: bytes
    headers: Any


async def _ask_bridged(
    flow: Flow, request: Request, ask: dict[str, Any]
) -> tuple[str, dict[str, Any]] | _Failed:
    """The summary and usage the flow's model answered, or the error answer (status, body, headers)."""
    try:
        chat = bridge.chat_request(ask)
    except bridge.BridgeRefusal as exc:
        return _Failed(400, bytes(state.error(400, str(exc), param=exc.param).body), {})
    answer = await serve_as_chat(flow, request, json.dumps(chat).encode("utf-8"), "/responses/compact")
    raw = bytes(answer.body)
    document = parse_json(raw)
    if answer.status_code != 200 or not isinstance(document, dict) or "choices" not in document:
        return _Failed(answer.status_code, raw, answer.headers)
    response = bridge.response(document, ask, "resp_compaction")
    return _text(response), response["usage"]


async def _ask_native(
    flow: Flow, request: Request, ask: dict[str, Any], upstream_model: str, base_path: str
) -> tuple[str, dict[str, Any]] | _Failed:
    """The summary and usage a Responses provider answered, or its error answer (status, body, headers)."""
    services = flow.services
    settings = services.settings.upstream
    key = settings.openai_api_key or settings.api_key
    headers = {"content-type": "application/json", **({"authorization": f"Bearer {key}"} if key else {})}
    endpoint = Endpoint("openai", base_path.rstrip("/") + "/responses", headers)
    content = respell_model(json.dumps(ask).encode("utf-8"), upstream_model)
    request_id: str = request.state.request_id
    async with services.upstream.passthrough(
        endpoint, content, query="", request_id=request_id, stream=False
    ) as got:
        document = parse_json(got.content) if got.status_code == 200 else None
        if not isinstance(document, dict):
            return _Failed(got.status_code, got.content, native.answer_headers(got.headers))
    usage = document.get("usage")
    return _text(document), usage if isinstance(usage, dict) else bridge.usage({})


def _text(response: dict[str, Any]) -> str:
    """The text of a Response's message items, joined."""
    return "".join(
        str(part.get("text", ""))
        for item in response.get("output") or []
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    )
