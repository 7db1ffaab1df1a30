"""harness/surfaces/responses/websocket.py and what the rest of the harness asks of a transport: the opening message,
the end of a turn, the socket's own error envelope; `upstream_compare` across two calls; the loader's `websocket`
capability; and a gateway that serves neither the socket nor /responses/compact, refusing both as clients expect,
passing the core rules with the features' rules NOT_APPLICABLE."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from harness.checks import check_for
from harness.engine.run import run_rule
from harness.engine.target import Target
from harness.errors import SpecError
from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.spec import load_rule_file
from harness.surfaces import surface
from harness.surfaces.chat_completions import SURFACE as CHAT
from harness.surfaces.responses import websocket
from tests.harness.checks.exchanges import call, exchange
from tests.harness.tiny_gateways import serve

SPECS = Path(__file__).resolve().parents[4] / "specs" / "responses"


def test_the_opening_message_is_response_create_without_the_http_transports_fields() -> None:
    body = {
        "model": "m",
        "input": "hi",
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
    }
    assert websocket.client_event(body) == {
        "type": "response.create",
        "model": "m",
        "input": "hi",
        "store": False,
    }
    assert body["stream"] is True  # the body itself is not changed


@pytest.mark.parametrize(
    ("message", "ends"),
    [
        ({"type": "response.completed"}, True),
        ({"type": "response.failed"}, True),
        ({"type": "error", "status": 400, "error": {}}, True),
        ("[DONE]", True),
        ({"type": "response.output_text.delta"}, False),
        ("not json", False),
    ],
    ids=["completed", "failed", "error", "done", "delta", "text"],
)
def test_what_ends_a_turn(message: object, ends: bool) -> None:
    assert websocket.ends_turn(message) is ends


def test_the_sockets_error_envelope_and_the_surfaces_for_anything_else() -> None:
    good = {"type": "error", "status": 404, "error": {"type": "invalid_request_error", "message": "m"}}
    assert list(websocket.envelope_violations(good, "stream[0]")) == []
    untyped = {"type": "error", "status": 429, "error": {"message": "slow"}}
    assert [v.path for v in websocket.envelope_violations(untyped, "stream[0]")] == ["stream[0].error"]
    body = {
        "error": {"message": "no", "type": "invalid_request_error"}
    }  # a refused upgrade's: OpenAI's envelope
    assert any("param" in v.message for v in websocket.envelope_violations(body, "$"))
    assert surface("responses").envelope_of("websocket") is websocket.envelope_violations
    assert surface("responses").envelope_of("http") is surface("responses").envelope


def test_upstream_compare_reads_same_as_in_another_call() -> None:
    one, other = (
        {"model": "m", "messages": [1], "max_tokens": 5},
        {"model": "m", "messages": [1], "max_tokens": 9},
    )
    compare = check_for("upstream_compare", CHAT)
    same = exchange("json/completion_text.json", upstream=(call(one), call(one)))
    differ = exchange("json/completion_text.json", upstream=(call(one), call(other)))
    spec = [{"call": -1, "path": "$", "same_as": "$", "same_as_call": 0}]
    assert list(compare(spec, same)) == []
    (violation,) = compare(spec, differ)
    assert "differing keys: max_tokens" in violation.message and "upstream call 0" in violation.message
    (missing,) = compare([{**spec[0], "same_as_call": 5}], same)
    assert "no upstream call 5" in missing.message


def test_a_rule_over_the_socket_declares_the_capability(tmp_path: Path) -> None:
    rule = {"id": "responses/websocket/x", "level": "MUST", "title": "t", "source": {"quote": "a quote"},
            "request": {"transport": "websocket", "body": {"model": "$MODEL", "input": "hi"}}, "expect": {"status": 101}}  # fmt: skip
    path = tmp_path / "x.yaml"
    path.write_text(json.dumps({"source": {"doc": "d", "section": "s"}, "rules": [rule]}), encoding="utf-8")
    with pytest.raises(SpecError, match=r"uses websocket: declare it in needs\.harness"):
        load_rule_file(path)
    rule["needs"] = {"harness": ["websocket"]}
    path.write_text(json.dumps({"source": {"doc": "d", "section": "s"}, "rules": [rule]}), encoding="utf-8")
    (loaded,) = load_rule_file(path).rules
    assert loaded.expect_for({}) == {"status": 101}  # no stream variant: its stream-only keys are kept


def test_a_socket_exchanges_request_is_a_stream_request() -> None:
    from harness.surfaces import reading

    sent = SentRequest("GET", "ws://h/v1/responses", {}, b"{}", {"model": "m"}, transport="websocket")
    assert reading.requested_stream(
        Exchange("r", {}, sent, ReceivedResponse(101, {}, b""), surface="responses")
    )


# ------------------------------------------------------------------------------ a gateway that serves neither


async def _upgrade(websocket_: WebSocket) -> None:
    await websocket_.send_denial_response(
        JSONResponse(
            {
                "error": {
                    "message": "Use HTTP.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "upgrade_required",
                }
            },
            status_code=426,
        )
    )


async def _not_served(request: Request) -> Response:
    message = f"No route for {request.url.path}."
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}, 404
    )


@pytest.fixture(scope="module")
def http_only_gateway() -> Iterator[str]:
    app = Starlette(
        routes=[
            WebSocketRoute("/v1/responses", _upgrade),
            Route("/v1/responses/compact", _not_served, methods=["POST"]),
            Route("/v1/responses/input_tokens", _not_served, methods=["POST"]),
        ]
    )
    with serve(app) as url:
        yield f"{url}/v1"


def test_a_gateway_serving_neither_passes_the_core_and_the_rest_is_not_claimed(
    http_only_gateway: str,
) -> None:
    target = Target(
        gateway_url=http_only_gateway, gateway_key="k", models={"MODEL": "m"}, surface="responses"
    )
    rules = [r for name in ("websocket.yaml", "compact.yaml") for r in load_rule_file(SPECS / name).rules]
    with httpx.Client(trust_env=False) as client:
        outcomes = {r.id: run_rule(r, v, target, client, None) for r in rules for v in r.variant_combos()}
    core = {"responses/websocket/upgrade-accepted-or-426", "responses/compact/answered-or-refused",
            "responses/compact/input-tokens-answered-or-refused"}  # fmt: skip
    assert {i: o.outcome for i, o in outcomes.items() if i in core} == dict.fromkeys(core, "PASS")
    rest = {o.outcome for i, o in outcomes.items() if i not in core}
    assert rest == {"NOT_APPLICABLE"}
    assert all("not claimed" in o.reason for i, o in outcomes.items() if i not in core)
