"""harness.engine.socket: the WebSocket transport fills the exchange the HTTP path fills — the upgrade's status (101,
or the refusal's status and body), each turn's events in SSE framing with their arrival times, the socket kept
across a rule's `then` steps, a closed socket or a silent gateway reported as the turn's transport error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket

from harness.checks import run_checks
from harness.engine.send import exchange_once
from harness.engine.socket import sse_frame
from harness.engine.target import Target
from harness.spec.model import Needs, Rule, Source
from harness.surfaces import reading
from harness.surfaces.responses import reading as responses_reading
from tests.harness.tiny_gateways import serve

KEY = "gc-socket-key"


def _events(response_id: str, text: str) -> list[dict[str, Any]]:
    """A whole short stream of the event grammar (one message, one text part)."""
    part = {"type": "output_text", "text": text, "annotations": []}
    item = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [part]}
    added = {**item, "status": "in_progress", "content": []}
    base = {"id": response_id, "object": "response", "created_at": 1, "model": "m", "output": []}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **where, "delta": text},
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {**base, "status": "completed", "output": [item]}},
    ]


async def _served(websocket: WebSocket) -> None:
    """A gateway's socket: each `response.create` answered with a short stream, numbered; `close-after-one` in the
    input closes the socket after the first turn; `silent` answers nothing."""
    if websocket.headers.get("authorization") != f"Bearer {KEY}":
        await websocket.send_denial_response(
            JSONResponse({"error": {"message": "no", "type": "invalid_request_error"}}, status_code=401)
        )
        return
    await websocket.accept()
    turns = 0
    while True:
        try:
            message = json.loads(await websocket.receive_text())
        except Exception:
            return
        turns += 1
        if "silent" in str(message.get("input")):
            await asyncio.sleep(5)
            continue
        for n, event in enumerate(_events(f"resp_{turns}", f"turn {turns}")):
            await websocket.send_text(json.dumps({**event, "sequence_number": n}))
        if "close-after-one" in str(message.get("input")):
            await websocket.close(1000)
            return


async def _refused(websocket: WebSocket) -> None:
    await websocket.send_denial_response(
        JSONResponse(
            {"error": {"message": "use HTTP", "type": "invalid_request_error", "param": None, "code": None}},
            status_code=426,
        )
    )


APP = Starlette(
    routes=[WebSocketRoute("/v1/responses", _served), WebSocketRoute("/off/v1/responses", _refused)]
)


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    with serve(APP) as url:
        yield url


def _rule(request: dict[str, Any], then: tuple[dict[str, Any], ...] = ()) -> Rule:
    return Rule(
        id="responses/websocket/test",
        level="MUST",
        title="t",
        source=Source("responses-contract", "WebSocket mode and compaction", "q"),
        request=request,
        expect={},
        needs=Needs(False, frozenset(), frozenset(), frozenset(), frozenset({"websocket"})),
        then=then,
    )


def _target(url: str, key: str = KEY) -> Target:
    return Target(gateway_url=url, gateway_key=key, rule_timeout=30.0, surface="responses")


def test_a_turn_fills_the_exchange_as_the_http_stream_would(gateway: str) -> None:
    rule = _rule({"transport": "websocket", "marker": "none", "body": {"model": "m", "input": "hi"}})
    with httpx.Client(trust_env=False) as client:
        exchange = exchange_once(rule, {}, _target(gateway + "/v1"), client, None, rule.then)
    sent = exchange.request
    assert sent.transport == "websocket" and sent.url == gateway.replace("http", "ws", 1) + "/v1/responses"
    assert json.loads(sent.body) == {"type": "response.create", "model": "m", "input": "hi"}
    assert sent.json == {"model": "m", "input": "hi"}
    response = exchange.response
    assert response.status == 101 and response.transport_error is None
    assert reading.is_stream(response) and reading.requested_stream(exchange)
    view = reading.stream_view(response.raw)
    assert [e.event for e in view.decoded.events] == [e["type"] for e in _events("r", "t")]
    assert [received for received, _ in response.arrivals][-1] == len(response.raw)
    assert responses_reading.output_text(responses_reading.assemble_view(view)) == "turn 1"
    # the grammar as over HTTP (the implicit SDK shape, which these short events do not have, left out)
    assert run_checks({"status": 101, "stream_order": {}, "shape": False}, exchange) == []


def test_steps_share_the_socket_and_a_new_connection_starts_afresh(gateway: str) -> None:
    then = ({"expect": {}}, {"request": {"connection": "new"}, "expect": {}})
    rule = _rule({"transport": "websocket", "marker": "none", "body": {"model": "m", "input": "hi"}}, then)
    with httpx.Client(trust_env=False) as client:
        exchange = exchange_once(rule, {}, _target(gateway + "/v1"), client, None, rule.then)
    texts = [
        responses_reading.output_text(responses_reading.assemble_view(reading.stream_view(e.response.raw)))
        for e in (exchange, *exchange.steps)
    ]
    assert texts == ["turn 1", "turn 2", "turn 1"]


def test_a_step_may_go_over_http(gateway: str) -> None:
    then = ({"request": {"transport": "http"}, "expect": {}},)
    rule = _rule({"transport": "websocket", "marker": "none", "body": {"model": "m", "input": "hi"}}, then)
    with httpx.Client(trust_env=False) as client:
        exchange = exchange_once(rule, {}, _target(gateway + "/v1"), client, None, rule.then)
    step = exchange.steps[0]
    assert step.request.transport == "http" and step.request.url == gateway + "/v1/responses"
    assert step.request.method == "POST" and json.loads(step.request.body) == {"model": "m", "input": "hi"}
    assert step.response.status == 404  # the tiny gateway serves no HTTP route


def test_a_refused_upgrade_is_its_status_and_body(gateway: str) -> None:
    rule = _rule({"transport": "websocket", "marker": "none", "body": {"model": "m", "input": "hi"}})
    with httpx.Client(trust_env=False) as client:
        exchange = exchange_once(rule, {}, _target(gateway + "/off/v1"), client, None)
        wrong_key = exchange_once(rule, {}, _target(gateway + "/v1", "wrong"), client, None)
    assert exchange.response.status == 426
    assert json.loads(exchange.response.raw)["error"]["message"] == "use HTTP"
    assert run_checks({"status": [101, 426], "error": {}}, exchange) == []
    assert wrong_key.response.status == 401


def test_a_socket_closed_after_the_first_turn_is_the_next_turns_transport_error(gateway: str) -> None:
    then = ({"expect": {}},)
    rule = _rule(
        {"transport": "websocket", "marker": "none", "body": {"model": "m", "input": "close-after-one"}}, then
    )
    with httpx.Client(trust_env=False) as client:
        exchange = exchange_once(rule, {}, _target(gateway + "/v1"), client, None, rule.then)
    assert exchange.response.transport_error is None
    step = exchange.steps[0].response
    assert step.status is None and step.raw == b""  # no answer at all: the socket said only that it opened
    assert step.transport_error is not None and "closed the WebSocket" in step.transport_error
    assert run_checks({"stream_order": {}}, exchange.steps[0]) != []


def test_a_silent_gateway_is_a_timeout_not_a_hang(gateway: str) -> None:
    rule = _rule({"transport": "websocket", "marker": "none", "body": {"model": "m", "input": "silent"}})
    target = Target(gateway_url=gateway + "/v1", gateway_key=KEY, rule_timeout=0.5, surface="responses")
    with httpx.Client(trust_env=False) as client:
        exchange = exchange_once(rule, {}, target, client, None)
    assert exchange.response.raw == b""
    assert "rule timeout" in (exchange.response.transport_error or "")


def test_sse_frame_names_the_event_and_keeps_every_line_of_the_message() -> None:
    assert sse_frame('{"type": "error"}') == b'event: error\ndata: {"type": "error"}\n\n'
    assert sse_frame("[DONE]") == b"data: [DONE]\n\n"
    assert sse_frame('{\n"type": "x"}') == b'event: x\ndata: {\ndata: "type": "x"}\n\n'
