"""OpenAI Responses as an inbound surface (`POST {base}/responses`; specs/responses/contract.md): its requests
(`input`, `instructions`), its Response objects and named-event streams (no sentinel: the stream ends with its
terminal event, `response.completed`, `response.incomplete` or `response.failed`), its errors, and the check kinds
whose meaning is its own.

    reading.py       what the events mean, the final Response a client's stream helper returns
    request.py       the case marker, padding and variants in a request body
    envelope.py      the error document: OpenAI's envelope, or a stream's `error` event
    stream_order.py  `stream_order`: the event grammar and what the deltas add up to
    finish.py        `finish_reason`: the response's status (and incomplete reason)
    shape.py         `shape`: the SDK's shape of every served answer (implicit)
    live.py          the live forms of expectations about the scripted answer
    websocket.py     the WebSocket transport: `response.create` turns on one socket, the same events back
"""

from __future__ import annotations

from harness.surfaces.base import Surface
from harness.surfaces.responses import (
    envelope,
    finish,
    live,
    reading,
    request,
    shape,
    stream_order,
    websocket,
)

SURFACE = Surface(
    name="responses",
    title="OpenAI Responses",
    label="responses",
    endpoint="responses",
    base_url_example="http://127.0.0.1:8080/v1",
    sentinel=None,
    answer_schema=shape.ANSWER,
    error_schema="openai.error",
    payload_schema=shape.payload_schema,
    assemble=reading.assemble_view,
    error_document=envelope.error_document,
    envelope=envelope.envelope_violations,
    insert_marker=request.insert_marker,
    grow_text=request.grow_text,
    apply_variant=request.apply_variant,
    checks={
        "stream_order": stream_order.check_stream_order,
        "finish_reason": finish.check_finish,
        "shape": shape.check_shape,
        **live.LIVE_CHECKS,
    },
    implicit_checks=("shape",),
    content_event=reading.carries_content,
    transports={"websocket": websocket.TRANSPORT},
    output_limit_fields=("max_output_tokens",),
    hello={"input": "Say hello.", "max_output_tokens": 16},
    clients=(
        "openai-python-responses",
        "openai-agents-responses",
        "openai-node-responses",
        "ai-sdk-responses",
        "openai-agents-node",
        "codex",
        "openai-python-responses-ws",
        "openai-agents-responses-ws",
        "codex-ws",
    ),
)
