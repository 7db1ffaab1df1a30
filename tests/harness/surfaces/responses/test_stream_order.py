"""The Responses event grammar (harness/surfaces/responses/stream_order.py): a stream as OpenAI sends it passes;
each way gateways broke it (specs/responses/responses-contract.md, Streaming; the threads its rules cite) is
named by a violation. The good stream is written out here, event by event, as the API reference shows it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.surfaces.reading import stream_view
from harness.surfaces.responses.reading import assemble_view
from harness.surfaces.responses.stream_order import check_stream_order

RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1796000000, "status": "in_progress", "model": "m",
            "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}  # fmt: skip
MESSAGE = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": "Hello there", "annotations": []}]}  # fmt: skip
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": '{"city":"Oslo"}',
        "status": "completed"}  # fmt: skip


def _events() -> list[dict[str, Any]]:
    part = {"type": "output_text", "text": "", "annotations": []}
    done_part = {"type": "output_text", "text": "Hello there", "annotations": []}
    adding = {**MESSAGE, "status": "in_progress", "content": []}
    calling = {**CALL, "status": "in_progress", "arguments": ""}
    final = {**RESPONSE, "status": "completed", "output": [MESSAGE, CALL],
             "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}  # fmt: skip
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": RESPONSE},
        {"type": "response.in_progress", "response": RESPONSE},
        {"type": "response.output_item.added", "output_index": 0, "item": adding},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hello"},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": " there"},
        {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Hello there"},
        {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": done_part},
        {"type": "response.output_item.done", "output_index": 0, "item": MESSAGE},
        {"type": "response.output_item.added", "output_index": 1, "item": calling},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": '{"city":'},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": '"Oslo"}'},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "arguments": '{"city":"Oslo"}'},
        {"type": "response.output_item.done", "output_index": 1, "item": CALL},
        {"type": "response.completed", "response": final},
    ]  # fmt: skip
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


GOOD = _events()


def sse(events: list[Any], *, names: bool = True, done: bool = False) -> bytes:
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        name = event.get("type") if isinstance(event, dict) else None
        out.append((f"event: {name}\n" if names and name else "") + f"data: {data}\n\n")
    return ("".join(out) + ("data: [DONE]\n\n" if done else "")).encode()


def exchange(raw: bytes) -> Exchange:
    request = SentRequest("POST", "http://gw/v1/responses", {}, b"{}", {"stream": True})
    response = ReceivedResponse(200, {"content-type": "text/event-stream"}, raw)
    return Exchange("r", {"stream": True}, request, response, surface="responses")


def messages_of(raw: bytes, expected: Any = None) -> list[str]:
    return [v.message for v in check_stream_order(expected or {}, exchange(raw))]


def renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


def edited(index: int, **changes: Any) -> list[dict[str, Any]]:
    events = copy.deepcopy(GOOD)
    events[index].update(changes)
    return events


def without(index: int) -> list[dict[str, Any]]:
    return renumbered([e for i, e in enumerate(copy.deepcopy(GOOD)) if i != index])


def test_the_documented_flow_passes_and_ends_with_the_final_response() -> None:
    assert messages_of(sse(GOOD)) == []
    assert messages_of(sse(GOOD, names=False)) == []  # the event name is optional; a wrong one is not
    assert messages_of(sse(GOOD, done=True)) == []  # openai-python stops at [DONE]: either end works
    final = assemble_view(stream_view(sse(GOOD)))
    assert final["status"] == "completed" and final["output"] == [MESSAGE, CALL]


BROKEN = {
    "an event name that is not the data's type": (
        sse(GOOD).replace(b"event: response.output_text.delta", b"event: message", 1),
        "the SSE event name differs from the data's type",
    ),
    "sequence numbers from 1": (
        sse([{**e, "sequence_number": e["sequence_number"] + 1} for e in GOOD]),
        "sequence_number does not start at 0",
    ),
    "a sequence number skipped": (sse(edited(5, sequence_number=9)), "grow by one"),
    "no sequence numbers": (
        sse([{k: v for k, v in e.items() if k != "sequence_number"} for e in GOOD]),
        "without an integer sequence_number",
    ),
    "no response.created": (sse(without(0)), "the first event is not response.created"),
    "a delta before its item is added (Sophomoresty/gemini-web2api#57: three events only)": (
        sse(without(2)),
        "an event for an item that was never added",
    ),
    "a delta before its part is added": (sse(without(3)), "for a content part that was never added"),
    "deltas that do not join to the done text": (
        sse(edited(5, delta=" world")),
        "differs from its deltas joined",
    ),
    "an empty done item (output_item.done with no content)": (
        sse(edited(8, item={**MESSAGE, "content": [{"type": "output_text", "text": "", "annotations": []}]})),
        "the done message's text differs",
    ),
    "arguments deltas that do not join (docker/docker-agent#3825: no deltas)": (
        sse(renumbered([e for i, e in enumerate(copy.deepcopy(GOOD)) if i not in (10, 11)])),
        "function_call_arguments.done differs from its deltas joined",
    ),
    "an item never done": (sse(without(13)), "an output item never done"),
    "no terminal event (the SDKs' final response is never set)": (
        sse(without(14)),
        "without a terminal event",
    ),
    "a terminal event carrying another response id": (
        sse(edited(14, response={**GOOD[14]["response"], "id": "resp_other"})),
        "id differs from response.created's",
    ),
    "an empty completed output (the final message built from nothing)": (
        sse(edited(14, response={**GOOD[14]["response"], "output": []})),
        "is not the items done, in order",
    ),
    "response.completed with status in_progress": (
        sse(edited(14, response={**GOOD[14]["response"], "status": "in_progress"})),
        "carries another status",
    ),
    "an event after the terminal one": (
        sse([*GOOD, {**GOOD[4], "sequence_number": len(GOOD)}]),
        "an event after the terminal event",
    ),
    "two output items with one output_index": (
        sse(edited(9, output_index=0)),
        "not above the earlier ones",
    ),
    "data that is not JSON": (sse([*GOOD[:3], "not json", *GOOD[3:]]), "data is not a JSON object"),
    "response.in_progress naming another response (BerriAI/litellm#26167: chatcmpl- and resp_ ids mixed)": (
        sse(edited(1, response={**RESPONSE, "id": "chatcmpl-1"})),
        "names another response than response.created",
    ),
}


@pytest.mark.parametrize(("raw", "fragment"), BROKEN.values(), ids=BROKEN.keys())
def test_each_breakage_is_named(raw: bytes, fragment: str) -> None:
    found = messages_of(raw)
    assert any(fragment in message for message in found), found


def test_an_error_event_ends_the_stream_or_is_followed_by_failed() -> None:
    error = {"type": "error", "code": "server_error", "message": "boom", "param": None}
    failed = {"type": "response.failed", "response": {**RESPONSE, "status": "failed", "error": {"code": "server_error", "message": "boom"}}}  # fmt: skip
    cut = renumbered([*copy.deepcopy(GOOD[:6]), error, failed])
    assert messages_of(sse(cut), {"error": True}) == []
    assert any("carries an error event" in m for m in messages_of(sse(cut)))
    silent = renumbered(copy.deepcopy(GOOD[:6]))  # BerriAI/litellm#29223: the error never reaches the client
    assert any(
        "without an error event or response.failed" in m for m in messages_of(sse(silent), {"error": True})
    )
    after = renumbered([*copy.deepcopy(GOOD[:6]), error, copy.deepcopy(GOOD[6])])
    assert any("after the error event" in m for m in messages_of(sse(after), {"error": True}))


def test_done_option() -> None:
    assert any("data: [DONE] line" in m for m in messages_of(sse(GOOD, done=True), {"done": "forbidden"}))
    assert any("no data: [DONE]" in m for m in messages_of(sse(GOOD), {"done": "required"}))


def test_the_terminal_output_is_matched_as_the_sdk_matches_it() -> None:
    """A done item whose status the terminal response reports as incomplete is the same item (openai-python's
    helper compares identities); a different text or call is not (LiteLLM 1.110.2's incomplete stream passes)."""
    final = copy.deepcopy(GOOD[14])
    final["response"]["output"][0]["status"] = "incomplete"
    assert messages_of(sse([*GOOD[:14], final])) == []
    final["response"]["output"][1]["arguments"] = '{"city":"Bergen"}'
    assert any("not the items done" in m for m in messages_of(sse([*GOOD[:14], final])))


def test_a_reasoning_item_re_encrypted_on_every_event_is_the_same_item() -> None:
    """OpenAI re-encrypts `encrypted_content` on every event that carries the item (audit D3): added, done and the
    terminal response each hold another blob, and the stream is still whole; another reasoning item id is not."""
    blob = {"type": "reasoning", "id": "rs_1", "summary": []}
    events = [
        {"type": "response.created", "response": RESPONSE},
        {"type": "response.output_item.added", "output_index": 0, "item": {**blob, "encrypted_content": "gAAA-one"}},
        {"type": "response.output_item.done", "output_index": 0, "item": {**blob, "encrypted_content": "gAAA-two"}},
        {"type": "response.completed", "response": {**RESPONSE, "status": "completed",
         "output": [{**blob, "encrypted_content": "gAAA-three"}],
         "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}},
    ]  # fmt: skip
    assert messages_of(sse(renumbered(events))) == []
    events[3]["response"]["output"][0]["id"] = "rs_2"
    assert any("not the items done" in m for m in messages_of(sse(renumbered(events))))


PATCH = '*** Begin Patch\n*** Update File: greet.py\n@@\n-print("Hi")\n+print("Hello")\n*** End Patch'
CUSTOM = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_2", "name": "apply_patch", "input": PATCH,
          "status": "completed"}  # fmt: skip


def _custom_events() -> list[dict[str, Any]]:
    """A custom tool's call streamed as OpenAI streams it (openai-python 3.57 ResponseCustomToolCallInput*Event)."""
    final = {**RESPONSE, "status": "completed", "output": [CUSTOM],
             "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}  # fmt: skip
    half = len(PATCH) // 2
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": RESPONSE},
        {"type": "response.output_item.added", "output_index": 0, "item": {**CUSTOM, "status": "in_progress", "input": ""}},
        {"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1", "output_index": 0, "delta": PATCH[:half]},
        {"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1", "output_index": 0, "delta": PATCH[half:]},
        {"type": "response.custom_tool_call_input.done", "item_id": "ctc_1", "output_index": 0, "input": PATCH},
        {"type": "response.output_item.done", "output_index": 0, "item": CUSTOM},
        {"type": "response.completed", "response": final},
    ]  # fmt: skip
    return renumbered(events)


CUSTOM_BROKEN = {
    "input deltas that do not join to the done input": (
        2,
        {"delta": "*** Begin"},
        "differs from its deltas joined",
    ),
    "a done item whose input is not the deltas' (the JSON-wrapped input, caozhiyuan/copilot-api#242)": (
        5,
        {"item": {**CUSTOM, "input": json.dumps({"input": PATCH})}},
        "the done call's input differs from its deltas joined",
    ),
    "custom input deltas for a function_call item (decolua/9router#1371)": (
        1,
        {"item": {**CALL, "id": "ctc_1", "status": "in_progress", "arguments": ""}},
        "for an item that is not a custom_tool_call",
    ),
}


def test_a_custom_tool_calls_input_stream_passes() -> None:
    assert messages_of(sse(_custom_events())) == []
    assert assemble_view(stream_view(sse(_custom_events())))["output"] == [CUSTOM]


@pytest.mark.parametrize(("index", "changes", "fragment"), CUSTOM_BROKEN.values(), ids=CUSTOM_BROKEN.keys())
def test_each_custom_input_breakage_is_named(index: int, changes: dict[str, Any], fragment: str) -> None:
    events = _custom_events()
    events[index].update(changes)
    found = messages_of(sse(events))
    assert any(fragment in message for message in found), found
