"""What the rules of Codex's round trips read from the provider's answer (issue 43, items 3 and 4): a custom tool's
freeform text (`${answer.tool_uses.<i>.text}`) in every family's form, Anthropic's thinking blocks whole
(`${answer.thinking_blocks}`) and Gemini's thought signatures (`${answer.signature}`), the same from a cassette's
stream as from its JSON answer."""

from __future__ import annotations

import json

import pytest

from harness import paths
from harness.cassette.document import Interaction, load_named
from harness.cassette.synthesize.common import PATCH, text_pieces
from harness.checks import answer
from harness.checks.answer import ToolUse
from harness.exchange import ServedAnswer


def _answers(name: str) -> list[answer.UpstreamAnswer]:
    """The summary of each interaction of a cassette (JSON answer, then stream)."""
    cassette = load_named(name, paths.cassettes_dir())
    out = []
    for it in cassette.interactions:
        summary = answer.summarize(_served(it))
        assert summary is not None, name
        out.append(summary)
    return out


def _served(it: Interaction) -> ServedAnswer:
    headers = {"content-type": it.response.content_type}
    return ServedAnswer(it.response.status, headers, it.response.body)


@pytest.mark.parametrize(
    "name",
    [
        "anthropic/custom-tool-call",
        "openai/custom-tool-call",
        "responses/custom-tool-call",
        "gemini/custom-tool-call",
    ],
)
def test_a_custom_tools_text_reads_the_same_in_every_family(name: str) -> None:
    for summary in _answers(name):
        (call,) = summary.tool_uses
        assert (call.name, call.text) == ("apply_patch", PATCH)
        assert json.loads(call.arguments) == {"input": PATCH}  # the same `input` reference everywhere


def test_a_streamed_custom_calls_fragments_are_its_input_deltas() -> None:
    _json, stream = _answers("responses/custom-tool-call")
    assert list(stream.tool_uses[0].fragments) == text_pieces(PATCH)


def test_text_is_none_for_arguments_that_are_not_one_input_string() -> None:
    assert ToolUse("c", "f", '{"city":"Oslo"}').text is None
    assert ToolUse("c", "f", '{"input":"x","more":1}').text is None
    assert ToolUse("c", "f", "not json").text is None


def test_thinking_blocks_whole_from_the_json_and_the_stream() -> None:
    as_json, as_stream = _answers("anthropic/thinking-tool-use")
    (block,) = as_json.thinking_blocks
    assert block["type"] == "thinking" and block["signature"] == as_json.signature and block["signature"]
    assert list(as_stream.thinking_blocks) == list(as_json.thinking_blocks)
    assert as_json.tool_uses[0].name == "get_weather"


def test_geminis_thought_signature() -> None:
    as_json, as_stream = _answers("gemini/tool-call-thought-signature")
    assert as_json.signature.startswith("CiQB") and as_stream.signature == as_json.signature
