"""harness/mutants/socket_relay.py: the mutating proxy's WebSocket passthrough — messages relayed as they came, the
client's noted by case marker, and each socket-only mutation (a refused upgrade, a socket closed after a turn,
events out of order, a message's field edited, the gateway's refusal re-statused); and `reach` over a socket's turns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from harness.engine.socket import sse_frame
from harness.engine.target import Outcome
from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.mutants.catalog import mutant_from
from harness.mutants.proxy import MUTANT_HEADER, ClientBook, ProxyServer
from harness.mutants.reach import reaches
from tests.harness.tiny_gateways import serve

MARKER = "[gc:responses/websocket/x#00112233]"
TURN = ["response.created", "response.output_item.added", "response.content_part.added", "response.completed"]


async def _gateway(websocket: WebSocket) -> None:
    """Echoes each turn's `input` back in a short event sequence; refuses a wrong key with 401."""
    if websocket.headers.get("authorization") != "Bearer k":
        await websocket.send_denial_response(JSONResponse({"error": {"message": "no"}}, status_code=401))
        return
    await websocket.accept()
    while True:
        try:
            message = json.loads(await websocket.receive_text())
        except Exception:
            return
        for n, kind in enumerate(TURN):
            await websocket.send_text(json.dumps({"type": kind, "sequence_number": n, "echo": message}))


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    with serve(Starlette(routes=[WebSocketRoute("/v1/responses", _gateway)])) as url:
        yield url


MUTANTS = [
    mutant_from(m)
    for m in (
        {"id": "m/refused", "side": "client", "area": "a", "title": "t", "models": "m",
         "upgrade": {"status": 405, "body": {"error": {"message": "GET is not allowed"}}}},
        {"id": "m/closed", "side": "client", "area": "a", "title": "t", "models": "m",
         "socket": {"close_after_turns": 1}},
        {"id": "m/swapped", "side": "client", "area": "a", "title": "t", "models": "m",
         "when": {"transport": "websocket"},
         "stream": [{"op": "after_next", "where": {"path": "type", "equals": "response.output_item.added"}}]},
        {"id": "m/edited", "side": "client", "area": "a", "title": "t", "models": "m",
         "when": {"transport": "websocket"}, "request": [{"op": "delete", "path": "instructions"}]},
        {"id": "m/restatused", "side": "client", "area": "a", "title": "t", "models": "m", "status": {401: 403}},
        {"id": "m/http-only", "side": "client", "area": "a", "title": "t", "models": "m",
         "when": {"transport": "http"}, "request": [{"op": "delete", "path": "instructions"}]},
    )
]  # fmt: skip


@pytest.fixture(scope="module")
def proxy(gateway: str) -> Iterator[tuple[ProxyServer, ClientBook]]:
    book = ClientBook()
    with ProxyServer(gateway, "client", book) as server:
        server.register(MUTANTS)
        yield server, book


def _turns(url: str, mutant: str | None, count: int, key: str = "k") -> list[list[dict[str, Any]]]:
    headers = {"authorization": f"Bearer {key}", **({MUTANT_HEADER: mutant} if mutant else {})}
    turns: list[list[dict[str, Any]]] = []
    with connect(
        url.replace("http://", "ws://") + "/v1/responses", additional_headers=headers, proxy=None
    ) as ws:
        for _ in range(count):
            events: list[dict[str, Any]] = []
            try:
                ws.send(
                    json.dumps(
                        {"type": "response.create", "instructions": "Be brief.", "input": f"{MARKER} hi"}
                    )
                )
                while not events or events[-1]["type"] != "response.completed":
                    events.append(json.loads(ws.recv(timeout=30)))
            except ConnectionClosed:
                pass
            turns.append(events)
    return turns


def test_without_a_mutant_every_message_passes_as_it_came_and_the_client_is_noted(
    proxy: tuple[ProxyServer, ClientBook],
) -> None:
    server, book = proxy
    (turn,) = _turns(server.url, None, 1)
    assert [e["type"] for e in turn] == TURN and turn[0]["echo"]["instructions"] == "Be brief."
    client, _ = book.find(MARKER.encode())
    assert client["type"] == "response.create"
    assert ("authorization", "Bearer k") in book.headers(MARKER.encode())


def test_each_socket_mutation(proxy: tuple[ProxyServer, ClientBook]) -> None:
    server, _ = proxy
    with pytest.raises(InvalidStatus) as refused:
        _turns(server.url, "m/refused", 1)
    assert refused.value.response.status_code == 405
    assert [len(t) for t in _turns(server.url, "m/closed", 2)] == [len(TURN), 0]
    (swapped,) = _turns(server.url, "m/swapped", 1)
    assert [e["type"] for e in swapped][1:3] == ["response.content_part.added", "response.output_item.added"]
    (edited,) = _turns(server.url, "m/edited", 1)
    assert "instructions" not in edited[0]["echo"]
    (untouched,) = _turns(server.url, "m/http-only", 1)
    assert untouched[0]["echo"]["instructions"] == "Be brief."
    with pytest.raises(InvalidStatus) as wrong_key:
        _turns(server.url, "m/restatused", 1, key="wrong")
    assert wrong_key.value.response.status_code == 403


def _socket_outcome(events: list[dict[str, Any]]) -> Outcome:
    raw = b"".join(sse_frame(json.dumps(e)) for e in events)
    message = json.dumps({"type": "response.create", "instructions": "Be brief.", "input": f"{MARKER} hi"})
    request = SentRequest("GET", "ws://h/v1/responses", {}, message.encode(), None, transport="websocket")
    exchange = Exchange("r", {}, request, ReceivedResponse(101, {}, raw), surface="responses")
    return Outcome("r", {}, "PASS", exchange=exchange)


def test_reach_over_a_sockets_turns() -> None:
    baseline = _socket_outcome([{"type": kind, "sequence_number": n} for n, kind in enumerate(TURN)])
    by_id = {m.id: m for m in MUTANTS}
    assert reaches(by_id["m/refused"], baseline) and reaches(by_id["m/closed"], baseline)
    assert reaches(by_id["m/swapped"], baseline) and reaches(by_id["m/edited"], baseline)
    assert not reaches(by_id["m/http-only"], baseline)
    assert not reaches(by_id["m/restatused"], baseline)  # a 101: nothing refused to re-status


def test_when_path_and_transport_gate_a_mutant() -> None:
    compact = mutant_from({"id": "m/c", "side": "client", "area": "a", "title": "t", "models": "m",
                           "when": {"path": "/responses/compact$"}, "status": {400: 404}})  # fmt: skip
    assert compact.applies(None, 400, path="/v1/responses/compact")
    assert not compact.applies(None, 400, path="/v1/responses")
    assert compact.applies(None, 400)  # the path not known: taken to apply
    assert not compact.on_socket("/v1/responses") and compact.on_socket("/v1/responses/compact")
    socket_only = MUTANTS[3]  # when: {transport: websocket}
    assert socket_only.request_applies({}, transport="websocket") and not socket_only.request_applies({})
