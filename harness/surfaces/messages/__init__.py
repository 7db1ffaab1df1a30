"""Anthropic Messages as an inbound surface (`POST {base}/messages`, docs/wire-reference.md §1): its requests,
its Message answers and named-event streams (no sentinel: the stream ends with `message_stop`), its error
envelope, and the check kinds whose meaning is its own.

    reading.py       what the events mean, the Message a client's accumulator assembles
    request.py       the case marker, padding and variants in a request body
    envelope.py      the error document and Anthropic's envelope
    stream_order.py  `stream_order`: the event grammar
    finish.py        `finish_reason`: the stop reason
    shape.py         `shape`: the SDK's shape of every served answer (implicit)
    live.py          the live forms of expectations about the scripted answer

The base URL is the same as for the other surfaces (`…/v1`): an Anthropic SDK or Claude Code takes the host
part (`ANTHROPIC_BASE_URL=http://host:port`) and posts to `/v1/messages` under it.
"""

from __future__ import annotations

from harness.surfaces.base import Surface
from harness.surfaces.messages import envelope, finish, live, reading, request, shape, stream_order

SURFACE = Surface(
    name="messages",
    title="Anthropic Messages",
    label="messages",
    endpoint="messages",
    base_url_example="http://127.0.0.1:8080/v1",
    sentinel=None,
    answer_schema="anthropic.message",
    error_schema="anthropic.error",
    payload_schema=shape.payload_schema,
    assemble=reading.assemble_view,
    error_document=envelope.error_document,
    envelope=envelope.envelope_violations,
    insert_marker=request.insert_marker,
    grow_text=request.grow_text,
    apply_variant=request.apply_variant,
    # The SDKs' constant (docs/wire-reference.md §1.1); a gateway passes it on or answers for it.
    request_headers={"anthropic-version": "2026-10-21"},
    checks={
        "stream_order": stream_order.check_stream_order,
        "finish_reason": finish.check_stop_reason,
        "shape": shape.check_shape,
        **live.LIVE_CHECKS,
    },
    implicit_checks=("shape",),
    content_event=reading.carries_content,
    output_limit_fields=("max_tokens",),
    clients=("anthropic-python", "langchain-anthropic", "anthropic-node", "claude-code"),
    fuzz_request_schema="anthropic.messages.request",
    hello={"max_tokens": 16, "messages": [{"role": "user", "content": "Say hello."}]},
)
