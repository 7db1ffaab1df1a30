"""The replay's OpenAI-family streams as OpenAI sends them for the request (audit D5): the usage chunk and the
chunks' usage keys only when `stream_options.include_usage` asked for them."""

from __future__ import annotations

import json

from harness.replay.plan import PlannedAnswer, as_asked, split_events

CHUNKS = [
    {"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}], "usage": None},
    {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": None},
    {"id": "c", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}},
]
BODY = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in CHUNKS) + b"data: [DONE]\n\n"
STREAM = PlannedAnswer(status=200, headers=(("content-type", "text/event-stream"),), body=BODY, sse=True)


def _chunks(answer: PlannedAnswer) -> list[object]:
    return [json.loads(e.split(b"data:", 1)[1]) for e in split_events(answer.body) if b"[DONE]" not in e]


def test_unasked_the_usage_chunk_and_keys_are_gone() -> None:
    served = as_asked(STREAM, "openai.chat", {"stream": True, "messages": []})
    chunks = _chunks(served)
    assert len(chunks) == 2 and all("usage" not in c for c in chunks)
    assert served.body.endswith(b"data: [DONE]\n\n")


def test_asked_the_stream_is_the_cassettes() -> None:
    asked = {"stream": True, "stream_options": {"include_usage": True}}
    assert as_asked(STREAM, "openai.chat", asked) is STREAM


def test_other_families_and_non_streams_are_untouched() -> None:
    assert as_asked(STREAM, "anthropic.messages", {}) is STREAM
    plain = PlannedAnswer(status=200, headers=(), body=b'{"usage": {}}', sse=False)
    assert as_asked(plain, "openai.chat", {}) is plain
