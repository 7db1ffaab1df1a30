"""OpenAI Chat Completions as an inbound surface (`POST {base}/chat/completions`, wire-reference §2): its
requests, its answers and chunk stream ending in `data: [DONE]`, its error envelope, and the check kinds whose
meaning is its own.

    reading.py       what the stream's payloads mean, the completion a client assembles, first choice, usage
    request.py       the case marker, padding and variants in a request body
    envelope.py      the error document and the OpenAI envelope
    stream_order.py  `stream_order`: the chunk state machine (specs/README.md, "Stream order")
    finish.py        `finish_reason`
    parity.py        `stream_matches_nonstream`
    shape.py         `shape`: the SDK's shape of every served answer (implicit)
    live.py          the live forms of expectations about the scripted answer
"""

from __future__ import annotations

from harness.surfaces.base import Surface
from harness.surfaces.chat_completions import (
    envelope,
    finish,
    live,
    parity,
    reading,
    request,
    shape,
    stream_order,
)
from harness.surfaces.reading import Payload


def _payload_schema(payload: Payload) -> str:
    return "openai.error" if reading.is_error(payload) else "openai.chat.completion.chunk"


SURFACE = Surface(
    name="chat-completions",
    title="OpenAI Chat Completions",
    label="chat completions",
    endpoint="chat/completions",
    base_url_example="http://127.0.0.1:8080/v1",
    sentinel=reading.DONE,
    answer_schema="openai.chat.completion",
    error_schema="openai.error",
    payload_schema=_payload_schema,
    assemble=reading.assemble_view,
    error_document=envelope.error_document,
    envelope=envelope.envelope_violations,
    insert_marker=request.insert_marker,
    grow_text=request.grow_text,
    apply_variant=request.apply_variant,
    checks={
        "stream_order": stream_order.check_stream_order,
        "finish_reason": finish.check_finish_reason,
        "stream_matches_nonstream": parity.check_stream_matches_nonstream,
        "shape": shape.check_shape,
        **live.LIVE_CHECKS,
    },
    implicit_checks=("shape",),
    content_event=reading.carries_content,
    output_limit_fields=("max_tokens", "max_completion_tokens"),
    clients=(
        "openai-python",
        "langchain-python",
        "openai-agents",
        "pydantic-ai",
        "instructor",
        "llama-index",
        "openai-node",
        "ai-sdk",
        "langchain-js",
    ),
    fuzz_request_schema="openai.chat.completion.request",
)
