"""Codex's round trips through the reference gateway's Responses bridge (issue 43, items 3 and 4), end to end over
the fake provider families: a custom tool offered as a function taking its text and its call turned back into a
custom_tool_call (streamed as custom input deltas), the next turn's custom call and output reaching the provider as
a call and its result; Claude's thinking blocks and Gemini's thought signatures carried in a reasoning item of the
gateway's own making and back, unchanged, on the next turn; the chat path's answers unchanged."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.surfaces.reading import stream_view
from harness.surfaces.responses.reading import assemble_view
from harness.surfaces.responses.stream_order import check_stream_order
from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import EZAT, LYROUTER, RELAY
from reference_gateway.policy.vocabulary import Profile
from reference_gateway.upstream.client import UpstreamSettings
from tests.reference_gateway.conftest import CLIENT_KEY, Answer, FakeFamilies, ServerThread, message, sse

PATCH = (
    '*** Begin Patch\n*** Update File: greet.py\n@@\n-print("Hello")\n+print("Hello, world!")\n*** End Patch'
)
CUSTOM = {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
          "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/s"}}  # fmt: skip
WEATHER = {"type": "function", "name": "get_weather", "description": "w",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip
THINKING = {"type": "thinking", "thinking": "I will call the tool.", "signature": "EqQBsig-unchanged=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBredacted-data"}
SIGNATURE = "CiQBthought-signature-unchanged"


def _settings(profile: Profile, upstream: str, state: Path) -> GatewaySettings:
    return GatewaySettings(
        profile=profile,
        catalog=load_catalog(shipped=profile.catalog),
        upstream=UpstreamSettings(base_url=upstream, api_key="sk-upstream", request_timeout=5.0),
        keys=KeyRing.of([CLIENT_KEY]),
        state_url=f"sqlite:///{state}",
    )


@contextlib.contextmanager
def gateway(profile: Profile, upstream: str, state: Path) -> Iterator[httpx.Client]:
    with ServerThread(create_app(_settings(profile, upstream, state), Hooks())) as server:
        headers = {"authorization": f"Bearer {CLIENT_KEY}", "content-type": "application/json"}
        with httpx.Client(base_url=server.url + profile.base_paths[0], headers=headers, timeout=10) as client:
            yield client


def anthropic_stream(blocks: Sequence[Mapping[str, Any]], stop: str = "tool_use") -> Answer:
    """A Messages stream of these blocks: thinking grown by deltas and signed; a tool_use's input cut into JSON
    fragments, two of them just after a backslash."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {**message(None), "content": []}}]
    for index, block in enumerate(blocks):
        start: dict[str, Any] = dict(block)
        deltas: list[dict[str, Any]] = []
        if block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]  # fmt: skip
        elif block["type"] == "tool_use":
            start = {**block, "input": {}}
            text = json.dumps(block["input"])
            cuts = [i + 1 for i, c in enumerate(text) if c == "\\"][:2]
            pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}})
    events.append({"type": "message_stop"})
    return Answer(body=b"".join(sse(e) for e in events), content_type="text/event-stream")


def anthropic_json(blocks: Sequence[Mapping[str, Any]], stop: str = "tool_use") -> Answer:
    return Answer(body=json.dumps({**message(None, stop_reason=stop), "content": list(blocks)}).encode())


def gemini_call(name: str, args: Mapping[str, Any], *, stream: bool) -> Answer:
    part = {"functionCall": {"name": name, "args": dict(args)}, "thoughtSignature": SIGNATURE}
    answer = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 3, "thoughtsTokenCount": 20,
                                "totalTokenCount": 32}}  # fmt: skip
    if stream:
        return Answer(
            body=b"data: " + json.dumps(answer).encode() + b"\r\n\r\n", content_type="text/event-stream"
        )
    return Answer(body=json.dumps(answer).encode())


def read(answer: httpx.Response, stream: bool) -> dict[str, Any]:
    """The Response a client ends with; a stream is first held to the event grammar (stream_order)."""
    assert answer.status_code == 200, answer.text
    if not stream:
        document: dict[str, Any] = answer.json()
        return document
    request = SentRequest("POST", "http://gw/v1/responses", {}, b"{}", {"stream": True})
    received = ReceivedResponse(200, {"content-type": "text/event-stream"}, answer.content)
    exchange = Exchange("r", {"stream": True}, request, received, surface="responses")
    assert [v.message for v in check_stream_order({}, exchange)] == []
    return assemble_view(stream_view(answer.content, "[DONE]"))


def upstream(families: FakeFamilies, index: int = -1) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(families.calls[index].raw)
    return body


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_custom_tools_call_comes_back_as_a_custom_tool_call_with_its_text(
    stream: bool, families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "apply_patch", "input": {"input": PATCH}}
    families.script.append(anthropic_stream([call]) if stream else anthropic_json([call]))
    body = {"model": "anthropic/claude-sonnet-5-5", "tools": [CUSTOM, WEATHER], "input": "Patch greet.py.",
            "stream": stream}  # fmt: skip
    with gateway(EZAT, families_server[1].url, tmp_path / "s.db") as client:
        answer = read(client.post("/responses", json=body), stream)
    (item,) = answer["output"]
    assert item["type"] == "custom_tool_call" and item["input"] == PATCH
    assert (item["name"], item["call_id"], item["status"]) == ("apply_patch", "toolu_1", "completed")
    tool = next(t for t in upstream(families)["tools"] if t["name"] == "apply_patch")
    assert tool["input_schema"]["properties"] == {"input": {"type": "string", "description": tool["input_schema"][
        "properties"]["input"]["description"]}}  # fmt: skip
    assert "start: /.+/s" in tool["description"]  # the grammar told to the model


def test_the_custom_input_streams_as_it_arrives_never_held() -> None:
    from reference_gateway.inbound.responses_stream import StreamBridge

    bridge = StreamBridge({"model": "m", "tools": [CUSTOM]}, "resp_1")
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "apply_patch", "arguments": ""}}
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]}
    bridge.feed(chunk)
    piece = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
        "arguments": '{"input": "*** Begin Patch\\'}}]}}]}  # fmt: skip
    (sent,) = bridge.feed(piece)
    assert b"response.custom_tool_call_input.delta" in sent and b'"delta": "*** Begin Patch"' in sent


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_next_turns_custom_call_and_output_reach_anthropic_as_a_call_and_its_result(
    stream: bool, families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    body = {"model": "anthropic/claude-sonnet-5-5", "tools": [CUSTOM], "stream": stream, "input": [
        {"role": "user", "content": "Patch greet.py."},
        {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_p", "output": "Done."},
    ]}  # fmt: skip
    with gateway(EZAT, families_server[1].url, tmp_path / "s.db") as client:
        read(client.post("/responses", json=body), stream)
    messages = upstream(families)["messages"]
    assert messages[1]["content"] == [{"type": "tool_use", "id": "call_p", "name": "apply_patch",
                                       "input": {"input": PATCH}}]  # fmt: skip
    result = messages[2]["content"][0]  # (EZAT's automatic cache breakpoint beside it)
    assert (result["type"], result["tool_use_id"], result["content"]) == ("tool_result", "call_p", "Done.")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_claudes_thinking_comes_back_on_the_next_turn_unchanged(
    stream: bool, families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    """Codex's stateless turn (store false): the reasoning item and the call go back with the call's output; the
    assistant turn reaches Anthropic starting with the thinking blocks as Claude wrote them."""
    call = {"type": "tool_use", "id": "toolu_7", "name": "get_weather", "input": {"city": "Oslo"}}
    blocks = [THINKING, REDACTED, call]
    families.script.append(anthropic_stream(blocks) if stream else anthropic_json(blocks))
    body = {"model": "anthropic/claude-sonnet-5-5", "store": False, "include": ["reasoning.encrypted_content"],
            "reasoning": {"effort": "medium", "summary": "auto"}, "tools": [WEATHER], "input": "Weather in Oslo?",
            "stream": stream}  # fmt: skip
    with gateway(EZAT, families_server[1].url, tmp_path / "s.db") as client:
        first = read(client.post("/responses", json=body), stream)
        reasoning, function_call = first["output"]
        assert reasoning["type"] == "reasoning" and reasoning["encrypted_content"].startswith("gcr1.")
        assert reasoning["summary"] == [{"type": "summary_text", "text": THINKING["thinking"]}]
        assert upstream(families)["thinking"] == {"type": "adaptive"}
        turn = [{"role": "user", "content": "Weather in Oslo?"}, reasoning, function_call,
                {"type": "function_call_output", "call_id": function_call["call_id"], "output": "7C"}]  # fmt: skip
        read(client.post("/responses", json={**body, "input": turn}), stream)
    assistant = upstream(families)["messages"][1]
    assert assistant["content"] == [THINKING, REDACTED, call]


def test_a_reasoning_item_of_another_maker_or_without_its_following_item_is_refused() -> None:
    from reference_gateway.inbound import reasoning_items
    from reference_gateway.inbound import responses_bridge as bridge

    foreign = {"type": "reasoning", "id": "rs_x", "summary": [], "encrypted_content": "gAAAAB-openai"}
    ours = reasoning_items.item([THINKING], "rs_1", "")
    for given in ([foreign, {"role": "user", "content": "hi"}], [{"role": "user", "content": "hi"}, ours]):
        with pytest.raises(bridge.BridgeRefusal):
            bridge.chat_request({"model": "m", "input": given})
    said = bridge.chat_request({"model": "m", "input": [{"role": "user", "content": "hi"}, ours,
                                                         {"role": "assistant", "content": "Hello."}]})  # fmt: skip
    assert said["messages"][1] == {"role": "assistant", "content": "Hello.", "reasoning_blocks": [THINKING]}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_geminis_thought_signature_comes_back_on_its_call(
    stream: bool, families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    families.script.append(gemini_call("get_weather", {"city": "Oslo"}, stream=stream))
    body = {"model": "gemini-flash", "store": False, "tools": [WEATHER], "input": "Weather in Oslo?",
            "stream": stream}  # fmt: skip
    with gateway(RELAY, families_server[1].url, tmp_path / "s.db") as client:
        first = read(client.post("/responses", json=body), stream)
        reasoning, function_call = first["output"]
        assert reasoning["type"] == "reasoning" and reasoning["summary"] == []
        turn = [{"role": "user", "content": "Weather in Oslo?"}, reasoning, function_call,
                {"type": "function_call_output", "call_id": function_call["call_id"], "output": "7C"}]  # fmt: skip
        read(client.post("/responses", json={**body, "input": turn}), stream)
    model_turn = upstream(families)["contents"][1]
    assert model_turn["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": SIGNATURE}
    ]


def test_the_chat_path_still_returns_no_thinking_and_no_reasoning_blocks(
    families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    """EZAT: "The thinking text itself isn't returned": the bridge's switch is the bridge's alone."""
    families.script.append(anthropic_json([THINKING, {"type": "text", "text": "Hi."}], stop="end_turn"))
    chat = {"model": "anthropic/claude-sonnet-5-5", "messages": [{"role": "user", "content": "hi"}]}
    with gateway(EZAT, families_server[1].url, tmp_path / "s.db") as client:
        said = client.post("/chat/completions", json=chat).json()["choices"][0]["message"]
    assert "reasoning_blocks" not in said and "reasoning_content" not in said


def test_reasoning_blocks_never_reach_an_openai_compatible_provider(
    families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    """A reasoning item made behind Anthropic sent on to a model of the OpenAI-compatible family (a model switch):
    the blocks have no place there and are left out."""
    from reference_gateway.inbound import reasoning_items

    ours = reasoning_items.item([THINKING], "rs_1", "")
    body = {"model": "deepseek-chat", "input": [{"role": "user", "content": "hi"}, ours,
                                                {"role": "assistant", "content": "Hello."},
                                                {"role": "user", "content": "again"}]}  # fmt: skip
    with gateway(LYROUTER, families_server[1].url, tmp_path / "s.db") as client:
        assert client.post("/responses", json=body).status_code == 200
    assert all("reasoning_blocks" not in m for m in upstream(families)["messages"])


def test_a_kept_conversation_carries_the_thinking_of_its_tool_turn(
    families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    """previous_response_id: the kept conversation's assistant turn keeps the thinking blocks of its reasoning item."""
    call = {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}}
    families.script.append(anthropic_json([THINKING, call]))
    body = {"model": "anthropic/claude-sonnet-5-5", "reasoning": {"effort": "medium"}, "tools": [WEATHER],
            "input": "Weather in Oslo?"}  # fmt: skip
    with gateway(EZAT, families_server[1].url, tmp_path / "s.db") as client:
        first = client.post("/responses", json=body).json()
        output = {"type": "function_call_output", "call_id": "toolu_9", "output": "7C"}
        again = {**body, "previous_response_id": first["id"], "input": [output]}
        assert client.post("/responses", json=again).status_code == 200
    assert upstream(families)["messages"][1]["content"] == [THINKING, call]
