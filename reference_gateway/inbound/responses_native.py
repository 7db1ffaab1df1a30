"""OpenAI Responses passed through to a Responses upstream (a channel with `responses: true`, models-lyrouter.yaml).

The client's body goes to `{base_path}/responses` as its bytes came (only `model` re-spelt to the channel's
upstream id), with the gateway's own OpenAI key; the answer of any status, and every stream event, come back as
the provider sent them. The gateway keeps the conversation itself, on the store the bridged path uses
(responses_state.py): a kept response's items are the request's input and the answer's output, and a
`previous_response_id` the gateway kept is sent upstream as those items followed by the new input (the field
itself is not sent, so the upstream needs no state of its own, and an id of this gateway is never asked of a
provider that does not have it). Reasoning items are replayed only with their `encrypted_content` (an item
without it can be resolved only by the provider that kept it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from reference_gateway.errors import GatewayError, note_error, passed_header, server_error
from reference_gateway.inbound import compaction
from reference_gateway.inbound import responses_state as state
from reference_gateway.inbound.base import open_passthrough, parse_json
from reference_gateway.inbound.messages import respell_model
from reference_gateway.policy.models import Channel
from reference_gateway.services import Services
from reference_gateway.sse import SSEDecoder
from reference_gateway.upstream.client import Endpoint

# Answer headers passed back to the client (the SDKs read the request id and the retry hints).
ANSWER_HEADERS = ("content-type", "x-request-id", "retry-after", "retry-after-ms", "x-should-retry")
TERMINAL = ("response.completed", "response.incomplete", "response.failed")
# Told of a response made: (the Response, its conversation as chat messages, as Responses items, the input items).
Remember = Callable[[dict[str, Any], list[dict[str, Any]], list[Any] | None, list[Any] | None], None]


def input_items(body: dict[str, Any]) -> list[Any]:
    """The request's `input` as a list of items (a string is one user message)."""
    given = body.get("input")
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    return list(given) if isinstance(given, list) else []


def history(record: dict[str, Any]) -> list[Any]:
    """A kept conversation as Responses items: its own items, or the bridged path's chat messages re-worded."""
    items = record.get("items")
    if isinstance(items, list):
        return [i for i in items if not (_is(i, "reasoning") and not i.get("encrypted_content"))]
    out: list[Any] = []
    for message in record.get("conversation") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id"),
                    "output": str(message.get("content") or ""),
                }
            )
            continue
        if isinstance(message.get("content"), str) and message["content"]:
            out.append({"role": message.get("role", "user"), "content": message["content"]})
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            out.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": function.get("arguments", ""),
                }
            )
    return out


def _is(item: Any, kind: str) -> bool:
    return isinstance(item, dict) and item.get("type") == kind


async def serve(
    services: Services,
    request: Request,
    raw: bytes,
    body: dict[str, Any],
    channel: Channel,
    record: dict[str, Any] | None,
    remember: Remember | None = None,
) -> Response:
    """One `POST /responses` for a model on a Responses channel; `record`: the kept previous response, if any;
    `remember`: told of the response made, `store: false` or not (a WebSocket's memory, socket_memory.py)."""
    asked = [*(history(record) if record is not None else []), *input_items(body)]
    if record is not None or any(compaction.is_ours(item) for item in asked):
        # This gateway's compaction items opened into their summaries: the provider cannot read them.
        sent = {k: v for k, v in body.items() if k != "previous_response_id"}
        sent["model"], sent["input"] = channel.upstream, compaction.expanded(asked)
        content = json.dumps(sent).encode("utf-8")
    else:
        content = raw if channel.upstream == body["model"] else respell_model(raw, channel.upstream)
    settings = services.settings.upstream
    key = settings.openai_api_key or settings.api_key
    headers = {"content-type": "application/json", **({"authorization": f"Bearer {key}"} if key else {})}
    endpoint = Endpoint("openai", channel.base_path.rstrip("/") + "/responses", headers)
    keep = body.get("store") is not False
    request_id: str = request.state.request_id
    upstream = services.upstream
    if body.get("stream") is not True:
        async with upstream.passthrough(
            endpoint, content, query="", request_id=request_id, stream=False
        ) as got:
            document = parse_json(got.content) if got.status_code == 200 else None
            if isinstance(document, dict) and isinstance(document.get("id"), str):
                await _keep(services, document, asked, input_items(body), keep, remember)
            return Response(got.content, status_code=got.status_code, headers=answer_headers(got.headers))
    refused, response, opened = await open_passthrough(
        upstream, endpoint, content, query="", request_id=request_id, headers_of=answer_headers
    )
    if refused is not None:
        return refused

    async def relay() -> AsyncIterator[bytes]:
        decoder, final, sequence = SSEDecoder(), None, 0
        try:
            async for piece in response.aiter_raw():
                yield piece
                for event in decoder.feed(piece):
                    data = parse_json(event.data.encode("utf-8"))
                    if not isinstance(data, dict):
                        continue
                    if isinstance(data.get("sequence_number"), int):
                        sequence = data["sequence_number"] + 1
                    if data.get("type") in TERMINAL and isinstance(data.get("response"), dict):
                        final = data["response"]
        except Exception as exc:
            note_error(exc if isinstance(exc, GatewayError) else server_error())
            failed = {
                "type": "error",
                "code": "server_error",
                "message": "The upstream provider's stream failed.",
                "param": None,
                "sequence_number": sequence,
            }
            yield f"event: error\ndata: {json.dumps(failed)}\n\n".encode()
        finally:
            await opened.__aexit__(None, None, None)
        if final is not None and isinstance(final.get("id"), str):
            await _keep(services, final, asked, input_items(body), keep, remember)

    kept = {k: v for k, v in answer_headers(response.headers).items() if k != "content-type"}
    return StreamingResponse(
        relay(), media_type="text/event-stream", headers={**kept, "cache-control": "no-cache"}
    )


async def _keep(
    services: Services,
    response: dict[str, Any],
    asked: list[Any],
    inputs: list[Any],
    keep: bool,
    remember: Remember | None,
) -> None:
    given = response.get("output")
    output: list[Any] = given if isinstance(given, list) else []
    if keep:
        await state.keep(services, response, [], items=[*asked, *output], inputs=inputs)
    if remember is not None:
        remember(response, [], [*asked, *output], inputs)


def answer_headers(headers: Any) -> dict[str, str]:
    """ANSWER_HEADERS, and the provider's rate-limit headers (gateway features: they reach the client)."""
    kept = {name: headers[name] for name in ANSWER_HEADERS if name in headers}
    kept.update({name.lower(): value for name, value in headers.items() if passed_header(name)})
    return kept
