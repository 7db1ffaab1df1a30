"""reference_gateway/inbound/responses_socket.py and responses_compact.py end to end: `/v1/responses` upgraded to a
WebSocket and driven by openai-python's own `responses.connect()` (and a plain websockets client where the SDK hides
what is judged), over the fake Anthropic upstream; `POST /v1/responses/compact` and its window sent back."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from reference_gateway.inbound import compaction
from tests.reference_gateway.conftest import (
    CLIENT_KEY,
    UPSTREAM_KEY,
    FakeAnthropic,
    Reply,
    message,
    text_events,
)

MODEL = "anthropic/claude-sonnet-5-5"


def _socket(gateway_url: str, **headers: str) -> ClientConnection:
    url = gateway_url.replace("http://", "ws://") + "/openai/v1/responses"
    given = headers or {"authorization": f"Bearer {CLIENT_KEY}"}
    return connect(url, additional_headers=given, proxy=None, open_timeout=30)


def _turn(ws: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    """One `response.create` and the events up to its terminal (or error) event."""
    ws.send(json.dumps({"type": "response.create", "model": MODEL, **body}))
    events: list[dict[str, Any]] = []
    while True:
        event = json.loads(ws.recv(timeout=60))
        events.append(event)
        if event["type"] in ("response.completed", "response.incomplete", "response.failed", "error"):
            return events


def test_the_sdk_connects_and_continues_a_store_false_response_on_the_socket(
    gateway_url: str, fake: FakeAnthropic
) -> None:
    fake.reply(Reply(events=text_events("Noted: TULIP.")), Reply(events=text_events("TULIP.")))
    client = openai.OpenAI(base_url=f"{gateway_url}/openai/v1", api_key=CLIENT_KEY, max_retries=0)
    with client.responses.connect() as connection:
        connection.response.create(model=MODEL, input="Remember the word TULIP.", store=False)
        first = next(e for e in connection if e.type == "response.completed").response
        connection.response.create(
            model=MODEL, input="Which word was it?", store=False, previous_response_id=first.id
        )
        second = next(e for e in connection if e.type == "response.completed").response
    assert first.output_text == "Noted: TULIP." and second.output_text == "TULIP."
    assert second.previous_response_id == first.id and first.store is False
    asked = fake.received[-1].body["messages"]
    assert [m["role"] for m in asked] == ["user", "assistant", "user"]
    assert "TULIP" in json.dumps(asked[0]) and fake.received[-1].headers["x-api-key"] == UPSTREAM_KEY
    assert fake.received[-1].body["stream"] is True


def test_a_store_false_response_is_not_found_on_another_socket_which_stays_usable(
    gateway_url: str, fake: FakeAnthropic
) -> None:
    with _socket(gateway_url) as ws:
        done = _turn(ws, input="Remember the code word: copper.", store=False)[-1]
    with _socket(gateway_url) as ws:
        (missing,) = _turn(ws, input="Which?", store=False, previous_response_id=done["response"]["id"])
        recovered = _turn(ws, input="Start again.", store=False)
    assert missing["type"] == "error" and missing["status"] == 404
    assert missing["error"]["code"] == "previous_response_not_found"
    assert missing["error"]["param"] == "previous_response_id"
    assert recovered[-1]["type"] == "response.completed"
    assert [e["sequence_number"] for e in recovered] == list(range(len(recovered)))


def test_a_failed_continuation_forgets_the_response_it_continued(
    gateway_url: str, fake: FakeAnthropic
) -> None:
    orphan = [{"type": "function_call_output", "call_id": "call_missing", "output": "x"}]
    with _socket(gateway_url) as ws:
        first = _turn(ws, input="Remember the code word: ember.", store=False)[-1]["response"]["id"]
        failed = _turn(ws, input=orphan, store=False, previous_response_id=first)
        stale = _turn(ws, input="Continue.", store=False, previous_response_id=first)
    assert failed[-1]["type"] == "error" and failed[-1]["status"] == 400
    assert "No tool call found" in failed[-1]["error"]["message"]
    assert stale[-1]["error"]["code"] == "previous_response_not_found"
    assert len(fake.received) == 1  # the orphan output never reached the provider


def test_a_kept_response_continues_on_another_socket_and_over_http(
    gateway_url: str, fake: FakeAnthropic
) -> None:
    with _socket(gateway_url) as ws:
        done = _turn(ws, input="Remember the word TULIP.")[-1]["response"]
    with _socket(gateway_url) as ws:
        again = _turn(ws, input="Which word?", previous_response_id=done["id"])
    assert done["store"] is True and again[-1]["type"] == "response.completed"
    got = httpx.get(
        f"{gateway_url}/openai/v1/responses/{done['id']}", headers={"authorization": f"Bearer {CLIENT_KEY}"}
    )
    assert got.status_code == 200 and got.json()["id"] == done["id"]


@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
def test_the_upgrade_reads_the_key_in_both_forms_and_refuses_a_wrong_one(
    gateway_url: str, fake: FakeAnthropic, header: str
) -> None:
    value = f"Bearer {CLIENT_KEY}" if header == "authorization" else CLIENT_KEY
    with _socket(gateway_url, **{header: value}) as ws:
        assert _turn(ws, input="hi")[-1]["type"] == "response.completed"
    with pytest.raises(InvalidStatus) as refused:
        _socket(gateway_url, authorization="Bearer wrong")
    assert refused.value.response.status_code == 401
    assert json.loads(refused.value.response.body or b"")["error"]["code"] == "invalid_api_key"
    assert all(CLIENT_KEY not in json.dumps(r.headers) for r in fake.received)


def test_errors_are_in_band_and_the_socket_stays_open(gateway_url: str, fake: FakeAnthropic) -> None:
    fake.reply(
        Reply(status=429, body={"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}})
    )
    with _socket(gateway_url) as ws:
        (limited,) = _turn(ws, input="hi")
        ws.send("not json")
        bad = json.loads(ws.recv(timeout=60))
        ws.send(json.dumps({"type": "response.cancel"}))
        unknown = json.loads(ws.recv(timeout=60))
        ok = _turn(ws, input="hi")
    assert limited["status"] == 429 and limited["error"]["type"]
    assert bad["status"] == 400 and unknown["error"]["param"] == "type"
    assert ok[-1]["type"] == "response.completed"


def test_a_warm_up_calls_no_model_and_is_chained_from(gateway_url: str, fake: FakeAnthropic) -> None:
    with _socket(gateway_url) as ws:
        warm = _turn(ws, input="Remember TULIP.", generate=False, store=False)
        assert [e["type"] for e in warm] == ["response.created", "response.completed"] and not fake.received
        _turn(ws, input="Which word?", store=False, previous_response_id=warm[-1]["response"]["id"])
    assert "TULIP" in json.dumps(fake.received[-1].body["messages"][0])


def test_compact_keeps_the_user_messages_and_the_summary_carries_the_rest(
    client: openai.OpenAI, gateway_url: str, fake: FakeAnthropic
) -> None:
    fake.reply(Reply(body=message("The user asked to remember TULIP; the assistant agreed.")))
    conversation = [
        {"role": "user", "content": "Remember the word TULIP."},
        {"role": "assistant", "content": "I will remember TULIP."},
        {"role": "user", "content": "Compress this conversation."},
    ]
    raw = client.responses.with_raw_response.compact(model=MODEL, input=conversation)  # type: ignore[arg-type]
    assert raw.parse().object == "response.compaction"  # the SDK reads it
    compacted = raw.http_response.json()
    assert [item["type"] for item in compacted["output"]] == ["message", "message", "compaction"]
    assert compacted["output"][0]["content"] == [{"type": "input_text", "text": "Remember the word TULIP."}]
    asked = fake.received[-1].body["messages"]
    assert asked[-1]["role"] == "user" and "compacting" in json.dumps(asked[-1])
    assert (
        compaction.opened(compacted["output"][-1])
        == "The user asked to remember TULIP; the assistant agreed."
    )
    fake.reply(Reply(body=message("TULIP.")))
    window = compacted["output"]
    client.responses.create(model=MODEL, input=[*window, {"role": "user", "content": "Which word?"}])
    sent = fake.received[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "user", "assistant", "user"]
    assert "the assistant agreed" in json.dumps(sent[2])


def test_compact_refusals(gateway_url: str, fake: FakeAnthropic) -> None:
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    url = f"{gateway_url}/openai/v1/responses/compact"
    no_model = httpx.post(url, json={"input": "hi"}, headers=headers)
    unknown = httpx.post(url, json={"model": "gc-nope", "input": "hi"}, headers=headers)
    nothing = httpx.post(url, json={"model": MODEL}, headers=headers)
    assert (no_model.status_code, no_model.json()["error"]["param"]) == (400, "model")
    assert unknown.status_code == 404 and nothing.status_code == 400
    foreign = {"type": "compaction", "encrypted_content": "gAAAA-not-ours"}
    refused = httpx.post(
        f"{gateway_url}/openai/v1/responses", json={"model": MODEL, "input": [foreign]}, headers=headers
    )
    assert refused.status_code == 400 and not fake.received
