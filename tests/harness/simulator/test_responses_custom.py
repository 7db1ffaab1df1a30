"""The simulator's Responses family answers a custom (freeform) tool as OpenAI does (issue 43, 3): its call is a
`custom_tool_call` whose `input` is the text the model wrote, streamed as `response.custom_tool_call_input` deltas;
a custom call and its output in the input are read as a call and its result."""

from __future__ import annotations

import random
from typing import Any

from harness.simulator import core
from harness.simulator import responses as resp

PATCH_TOOL = {"type": "custom", "name": "apply_patch", "description": "Apply a patch."}


def _answer(**fields: Any) -> tuple[str, Any]:
    body = {"model": "gpt-5.5", "input": "Patch greet.py.", "tools": [PATCH_TOOL], "tool_choice": "required"}
    return resp.answer({**body, **fields}, random.Random(3), core.PrefixCache())


def test_a_custom_tools_call_is_a_custom_tool_call_with_its_text() -> None:
    kind, response = _answer()
    (item,) = [i for i in response["output"] if i["type"] == "custom_tool_call"]
    assert (
        kind == "json" and item["name"] == "apply_patch" and isinstance(item["input"], str) and item["input"]
    )
    assert not [i for i in response["output"] if i["type"] == "function_call"]


def test_streamed_its_input_deltas_join_to_the_done_input() -> None:
    kind, events = _answer(stream=True)
    deltas = [e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta"]
    (done,) = [e for e in events if e["type"] == "response.custom_tool_call_input.done"]
    assert kind == "sse" and deltas and "".join(deltas) == done["input"]


def test_a_custom_call_and_its_output_are_read_as_a_call_and_its_result() -> None:
    chat = resp.chat_body({"model": "gpt-5.5", "tools": [PATCH_TOOL], "tool_choice": {"type": "custom", "name": "apply_patch"}, "input": [
        {"role": "user", "content": "Patch greet.py."},
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done."},
    ]})  # fmt: skip
    assert chat["messages"][1]["tool_calls"][0]["function"] == {
        "name": "apply_patch",
        "arguments": '{"input": "*** Begin Patch"}',
    }
    assert chat["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "Done."}
    assert chat["tool_choice"] == {"type": "function", "function": {"name": "apply_patch"}}
