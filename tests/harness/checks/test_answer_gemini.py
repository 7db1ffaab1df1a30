"""The served-answer summary reads Gemini answers (JSON and alt=sse) in the same normalised terms as the others."""

from __future__ import annotations

import pytest

from harness.cassette.document import load_named
from harness.checks.answer import summarize
from harness.exchange import ServedAnswer
from harness.paths import cassettes_dir


def _served(name: str, stream: bool) -> ServedAnswer:
    cassette = load_named(f"gemini/{name}", cassettes_dir())
    it = next(i for i in cassette.interactions if i.request.stream is stream and i.response.status == 200)
    headers = {k: v[0] for k, v in it.response.headers.items()}
    return ServedAnswer(status=200, headers=headers, body=it.response.body)


@pytest.mark.parametrize("stream", [False, True])
def test_text_and_usage(stream: bool) -> None:
    answer = summarize(_served("text-basic", stream))
    assert answer is not None and answer.format == "gemini" and answer.stream is stream
    assert answer.text == "An API gateway is one entry point in front of many services."
    assert answer.stop_reason == "STOP"
    assert answer.usage == {
        "input_tokens": 24,
        "output_tokens": 14,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "thinking_tokens": 0,
    }


@pytest.mark.parametrize("stream", [False, True])
def test_function_calls_without_ids(stream: bool) -> None:
    answer = summarize(_served("tool-call-parallel", stream))
    assert answer is not None
    assert [(t.id, t.name, t.arguments) for t in answer.tool_uses] == [
        (None, "get_weather", '{"city":"Oslo"}'),
        (None, "get_time", '{"timezone":"Europe/Paris"}'),
    ]
    assert answer.text == "Checking both."


@pytest.mark.parametrize("stream", [False, True])
def test_cached_content_is_inside_the_prompt_count(stream: bool) -> None:
    answer = summarize(_served("cache-read", stream))
    assert answer is not None
    assert answer.usage["cache_read_input_tokens"] == 2048
    assert answer.usage["input_tokens"] == 2060 - 2048
