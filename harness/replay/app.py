"""The replay upstream's ASGI app: provider endpoints answered by case marker, the control API, the files.

Control API (JSON): `POST /__gc/cases` {marker, rule, upstream} → 201; `GET /__gc/calls?marker=M`;
`DELETE /__gc/cases?marker=M` (no marker: every case; with `&calls=1`, the case's calls are the answer, as
`GET /__gc/calls` gives them); `GET|DELETE /__gc/diagnostics`;
`GET /__gc/fetches` (file-server requests); `GET /__gc/health`.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from dataclasses import replace
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harness import sse
from harness.cassette.matching import match
from harness.errors import ReplayConfigError
from harness.families import endpoint_family, endpoint_kind
from harness.replay import compaction
from harness.replay.files import serve_file
from harness.replay.plan import (
    Plan,
    PlannedAnswer,
    as_asked,
    cassette_answer,
    echo_model,
    error_body,
    fault_answer,
    plan_answer,
)
from harness.replay.sending import PlanResponse
from harness.replay.state import Case, ReplayState, encode_body
from harness.replay.validate import refusal


def _header_dict(request: Request) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in request.headers.items():
        out[k] = f"{out[k]}, {v}" if k in out else v
    return out


def _call_record(request: Request, body: bytes) -> dict[str, Any]:
    """A call the gateway made, as the harness reads it (`served` is filled in once the answer is planned)."""
    text, enc = encode_body(body)
    return {
        "method": request.method,
        "path": request.url.path,
        "query": request.url.query,
        "headers": _header_dict(request),
        "body": text,
        "body_encoding": enc,
        "received_at": time.time(),
        "served": None,
    }


def _json_answer(status: int, body: bytes) -> PlannedAnswer:
    return PlannedAnswer(status=status, headers=(("content-type", "application/json"),), body=body, sse=False)


def _served_record(plan: Plan, answer: PlannedAnswer) -> dict[str, Any]:
    text, enc = encode_body(plan.body)
    return {
        "status": plan.status,
        "headers": dict(plan.headers),
        "body": text,
        "body_encoding": enc,
        "cassette": answer.cassette,
        "interaction": answer.interaction,
        "fault": plan.fault,
        # the pauses between the answer's pieces: how long a provider this slow takes to stream it
        "paced_seconds": round(plan.first_byte_delay + sum(delay for delay, _ in plan.chunks), 4),
    }


def _error_response(kind: str | None, status: int, message: str) -> Response:
    return Response(error_body(kind, status, message), status, media_type="application/json")


def _scripted_error(kind: str | None, message: str) -> PlannedAnswer:
    return _json_answer(400, error_body(kind, 400, f"gateway-conformance replay: {message}"))


def _no_case_message(seen: list[str]) -> tuple[str, str]:
    if seen:
        return "unknown-marker", f"case marker {seen[0]} is not registered (stale or from another run)"
    return "unmarked", "the request carries no case marker [gc:<rule>#<nonce>]; was the user text dropped?"


def _case_calls(read: Any, marker: str) -> Response:
    """A case's calls (`read`: ReplayState.snapshot, or take) as JSON, through orjson: they carry the
    gateway's request bodies (tens of megabytes for the body-limit rules), which the standard encoder takes
    several times as long to write."""
    try:
        snap = read(marker)
    except ReplayConfigError as exc:
        return JSONResponse({"error": str(exc)}, 400)
    if snap is None:
        return JSONResponse({"error": f"unknown marker {marker}"}, 404)
    return Response(orjson.dumps(snap), media_type="application/json")


def _refused(
    kind: str | None, status: int, message: str, param: str | None, code: str | None
) -> PlannedAnswer:
    """The provider's own refusal, in its envelope."""
    return _json_answer(
        status, error_body(kind, status, message, "invalid_request_error", param=param, code=code)
    )


def _unkept_previous(case: Case, kind: str | None, body: Any) -> str | None:
    """The `previous_response_id` of a Responses request that names no response this case kept, or None."""
    if kind != "openai.responses" or not isinstance(body, dict):
        return None
    previous = body.get("previous_response_id")
    return previous if isinstance(previous, str) and previous not in case.kept_responses else None


def _fresh_response_id(kind: str | None, answer: PlannedAnswer) -> PlannedAnswer:
    """A Responses answer under an id of its own: OpenAI names every response anew, and a gateway that keeps
    responses by id (or passes `previous_response_id` on) must not see one cassette's id for every request."""
    if kind != "openai.responses" or answer.status != 200:
        return answer
    found = re.search(rb'"id"\s*:\s*"(resp_[^"]+)"', answer.body)
    if not found:
        return answer
    fresh = found.group(1) + secrets.token_hex(6).encode()
    return replace(answer, body=answer.body.replace(b'"' + found.group(1) + b'"', b'"' + fresh + b'"'))


def _kept_object(answer: PlannedAnswer) -> bytes | None:
    """The Response object a kept answer is retrieved as: the JSON answer, or a stream's terminal event's response."""
    if not answer.sse:
        return answer.body
    for event in reversed(sse.decode(answer.body).events):
        try:
            data = orjson.loads(event.data or "")
        except orjson.JSONDecodeError:
            continue
        if (
            isinstance(data, dict)
            and data.get("type") in TERMINAL_EVENTS
            and isinstance(data.get("response"), dict)
        ):
            return orjson.dumps(data["response"])
    return None


TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
# `GET /v1/models`: the provider's model list, as a gateway that passes the listing on asks it.
MODELS_PATH = re.compile(r"^(?:/v1)?/models/?$")
# The model ids the provider serves: the OpenAI and Anthropic ids the suite's profiles name by default
# (specs/*/profile.yaml) and its cassettes were recorded with. The replay answers any id; a gateway that lists its
# provider's models lists these.
OPENAI_MODELS = ("gpt-5.5", "gpt-5.5-2026-09-18", "gpt-4.1", "deepseek-chat", "kimi-k2")
ANTHROPIC_MODELS = (
    "claude-sonnet-5-5", "claude-sonnet-4-5-20250929", "claude-haiku-4-5", "claude-haiku-3-5", "claude-opus-4-8",
)  # fmt: skip
MODELS_CREATED = 1_767_225_600  # 2026-01-01, fixed: the answer depends on the request alone


def models_answer(anthropic: bool) -> bytes:
    """`GET /v1/models` as the provider answers it: Anthropic's page (asked with `anthropic-version`) or OpenAI's
    list."""
    data: list[dict[str, Any]]
    if anthropic:
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"}
            for m in ANTHROPIC_MODELS
        ]
        return orjson.dumps(
            {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
        )
    data = [
        {"id": m, "object": "model", "created": MODELS_CREATED, "owned_by": "openai"} for m in OPENAI_MODELS
    ]
    return orjson.dumps({"object": "list", "data": data})


# `GET|DELETE …/responses/{id}` (OpenAI's retrieve and delete of a kept response) and `GET …/{id}/input_items`
KEPT_PATH = re.compile(r"^(?:/v1)?/responses/([^/]+)(/input_items)?$")


def _keep_response(
    state: ReplayState, case: Case, kind: str | None, body: Any, answer: PlannedAnswer
) -> None:
    """A Responses answer kept for the case under its id, as OpenAI keeps a response unless the request said store
    false: a later `previous_response_id`, GET or DELETE may name it."""
    if kind != "openai.responses" or answer.status != 200:
        return
    found = re.search(rb'"id"\s*:\s*"(resp_[^"]+)"', answer.body)  # the Response's id (first in both forms)
    if found:
        store = not (isinstance(body, dict) and body.get("store") is False)
        given = body.get("input") if isinstance(body, dict) else None
        inputs = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
        state.issue_response(case, found.group(1).decode(), _kept_object(answer) if store else None, inputs)


def _continued_case(state: ReplayState, kind: str | None, body: bytes) -> Case | None:
    """The case whose response an unmarked Responses request continues (`previous_response_id`): the marker is in
    the conversation the id names, which api.openai.com holds, not in the new input. A response created with store
    false, or deleted, is still its case's: the call is recorded there and refused 404 as OpenAI refuses it."""
    if kind != "openai.responses":
        return None
    try:
        previous = json.loads(body).get("previous_response_id")
    except (ValueError, AttributeError):
        return None
    return state.issuing_case(previous) if isinstance(previous, str) else None


def deployment_of(path: str, body: Any) -> str:
    """Which deployment a call reaches: its endpoint path (Gemini's names the model; a base path tells two
    deployments of one provider apart) and the model its body names."""
    model = body.get("model") if isinstance(body, dict) else None
    return f"{path}|{model if isinstance(model, str) else ''}"


def _for_deployment(case: Case, path: str, body: Any) -> dict[str, Any]:
    """The case's upstream options as they apply to this call: a fault marked `first_deployment_only` answers only
    the calls to the deployment the case's first call reached (its retries fail the same way); a call to another
    deployment — a fallback — is served from the cassette, without the fault."""
    fault = case.upstream.get("fault") or {}
    deployment = deployment_of(path, body)
    if case.first_deployment is None:
        case.first_deployment = deployment
    if not fault.get("first_deployment_only") or deployment == case.first_deployment:
        return case.upstream
    return {key: value for key, value in case.upstream.items() if key != "fault"}


def _input_items(rid: str, inputs: list[Any], order: str | None) -> dict[str, Any]:
    """OpenAI's list of a response's input items: each message with an id, `type: message` and content parts."""
    items = []
    for i, item in enumerate(inputs):
        if not isinstance(item, dict):
            continue
        shown = {"id": f"msg_{rid[5:21]}{i:04d}", **item}
        if shown.get("type", "message") == "message":
            content = shown.get("content")
            kind = "output_text" if shown.get("role") == "assistant" else "input_text"
            shown.update(type="message", status=shown.get("status") or "completed")
            if isinstance(content, str):
                shown["content"] = [{"type": kind, "text": content}]
        items.append(shown)
    if order != "asc":
        items.reverse()
    first, last = (items[0]["id"], items[-1]["id"]) if items else (None, None)
    return {"object": "list", "data": items, "first_id": first, "last_id": last, "has_more": False}


class ReplayEndpoints:
    """The request handlers, over one ReplayState."""

    def __init__(self, state: ReplayState) -> None:
        self.state = state

    async def upstream(self, request: Request) -> Response:
        """A provider endpoint: find the case by marker, record the call, answer with its plan."""
        state, path = self.state, request.url.path
        # POST /v1/responses/compact: played from the Responses cassette as a create (harness/replay/compaction.py)
        compacting = request.method == "POST" and compaction.asked(path)
        kind = "openai.responses" if compacting else endpoint_kind(path)
        try:
            body = await request.body()
        except (
            ClientDisconnect
        ):  # the gateway gave up while still sending (its own timeout): nobody to answer
            state.diagnose(
                "disconnected", "the gateway closed the connection while sending its request", path, b""
            )
            return Response(status_code=499)
        if request.method == "GET" and MODELS_PATH.match(path):
            return self._models(request)
        kept = KEPT_PATH.match(path)
        if kept is not None and (
            request.method == "GET" or (request.method == "DELETE" and not kept.group(2))
        ):
            return self._kept_response(request, kept.group(1), body, listing=bool(kept.group(2)))
        if kind is None or request.method != "POST":
            state.diagnose("unknown-path", f"{request.method} {path} is not an upstream endpoint", path, body)
            msg = f"gateway-conformance replay: no upstream endpoint {request.method} {path}"
            return Response(error_body(kind, 404, msg, "not_found_error"), 404, media_type="application/json")
        case, seen = state.find_case(body)
        if case is None and not seen:
            case = _continued_case(state, kind, body)
        if case is None:
            diag, msg = _no_case_message(seen)
            state.diagnose(diag, msg, path, body, markers=seen)
            return _error_response(kind, 400, f"gateway-conformance replay: {msg}")
        call = _call_record(request, body)
        try:
            body_json = json.loads(body) if body else None
        except ValueError:
            body_json = None
        upstream = _for_deployment(case, path, body_json)
        problem = refusal(kind, body_json, call["headers"])
        if problem is not None:
            # What the real provider would answer: the gateway sent something it refuses.
            msg = f"gateway-conformance replay (validating like the provider): {problem}"
            state.diagnose("provider-refusal", msg, path, body, marker=case.marker, rule=case.rule)
            answer = _refused(kind, 400, msg, getattr(problem, "param", None), getattr(problem, "code", None))
        elif (missing := _unkept_previous(case, kind, body_json)) is not None:
            # What api.openai.com answers an id it does not keep (never created here, or created with store false):
            # 400 previous_response_not_found (maximhq/bifrost#2441 quotes it; SMG 1.13.0 relays it so).
            msg = f"Previous response with id '{missing}' not found."
            answer = _refused(kind, 400, msg, "previous_response_id", "previous_response_not_found")
        else:
            scripted = compaction.create_path(path) if compacting else path
            answer = as_asked(
                self._answer(case, kind, request.method, scripted, body_json, upstream), kind, body_json
            )
            if upstream.get("echo_model"):  # the answer names the model asked for, as a provider's does
                answer = echo_model(answer, kind, body_json, path)
            if compacting:  # a compaction is no response: nothing kept under an id
                answer = compaction.compacted(answer, body_json)
            else:
                answer = _fresh_response_id(kind, answer)
                _keep_response(state, case, kind, body_json, answer)
        plan = plan_answer(answer, upstream if problem is None else {}, kind)
        # Recorded before sending: the harness may ask as soon as the gateway has answered.
        call["served"] = {**_served_record(plan, answer), "provider_refusal": problem}
        state.add_call(case, call)

        def on_disconnect(sent: int) -> None:
            call["served"] = {
                **call["served"],
                "body": encode_body(plan.body[:sent])[0],
                "client_disconnected": True,
            }

        return PlanResponse(plan, on_disconnect)

    def _models(self, request: Request) -> Response:
        """The provider's model list; the call carries no case marker, so it is noted among the diagnostics."""
        anthropic = "anthropic-version" in request.headers
        self.state.diagnose(
            "models", f"GET {request.url.path} answered the provider's model list", request.url.path, b""
        )
        return Response(models_answer(anthropic), 200, media_type="application/json")

    def _kept_response(self, request: Request, rid: str, body: bytes, listing: bool = False) -> Response:
        """`GET /v1/responses/{id}` answers a kept Response, `DELETE` forgets it (`{"id", "object": "response",
        "deleted": true}`), `GET …/{id}/input_items` lists its request's input items (newest first unless
        `order=asc`); an id not kept (never created, store false, deleted) is OpenAI's 404. The call is recorded on
        the case whose answer carried the id: the harness reads it as that rule's upstream call."""
        state, path = self.state, request.url.path
        owner, kept = state.issuing_case(rid), state.kept_case(rid)
        if kept is None:
            answer = _refused("openai.responses", 404, f"Response with id '{rid}' not found.", None, None)
            if owner is None:
                state.diagnose(
                    "unknown-response", f"{request.method} {path}: no response {rid} was issued", path, body
                )
        elif listing:
            order = request.query_params.get("order")
            answer = _json_answer(
                200, orjson.dumps(_input_items(rid, kept.kept_inputs.get(rid) or [], order))
            )
        elif request.method == "DELETE":
            state.delete_kept(rid)
            answer = _json_answer(200, orjson.dumps({"id": rid, "object": "response", "deleted": True}))
        else:
            answer = _json_answer(200, kept.kept_responses.get(rid) or b"{}")
        plan = plan_answer(answer, {}, "openai.responses")
        if owner is not None:
            state.add_call(
                owner,
                {
                    **_call_record(request, body),
                    "served": {**_served_record(plan, answer), "provider_refusal": None},
                },
            )
        return PlanResponse(plan, lambda sent: None)

    def _answer(
        self,
        case: Case,
        kind: str | None,
        method: str,
        path: str,
        body_json: Any,
        upstream: dict[str, Any] | None = None,
    ) -> PlannedAnswer:
        """What the case scripts for this call (`upstream`: the case's options as they apply to this call's
        deployment): an injected fault, or the matching cassette interaction."""
        fault = (case.upstream if upstream is None else upstream).get("fault") or {}
        if "status" in fault:
            return fault_answer(kind, fault)
        cassette = case.for_family(endpoint_family(path))
        if cassette is None:
            family = endpoint_family(path) if case.family_cassettes else None
            why = f" for the {family} family" if family else ""
            return _scripted_error(kind, f"no upstream answer is scripted{why} for rule {case.rule}")
        result = match(cassette, method, path, body_json)
        if not result.ok:
            msg = f"cassette {cassette.name}: {result.describe()}"
            raw = json.dumps(body_json).encode() if body_json is not None else b""
            self.state.diagnose("no-match", msg, path, raw, marker=case.marker, rule=case.rule)
            return _scripted_error(kind, msg)
        return cassette_answer(cassette, self.state.next_interaction(case, result.candidates))

    async def register(self, request: Request) -> Response:
        try:
            payload = await request.json()
        except ValueError:
            return JSONResponse({"error": "body must be JSON"}, 400)
        if not isinstance(payload, dict) or not isinstance(payload.get("marker"), str):
            return JSONResponse({"error": "expected {marker: str, rule: str, upstream: object|null}"}, 400)
        args = (payload["marker"], str(payload.get("rule") or ""), payload.get("upstream"))
        try:
            # A cassette read from disk for the first time is file I/O and YAML: off the event loop. Once in
            # memory, registering is a dictionary update, cheaper than the hand-off to a thread.
            if self.state.loaded(payload.get("upstream")):
                case = self.state.register(*args)
            else:
                case = await asyncio.to_thread(self.state.register, *args)
        except ReplayConfigError as exc:
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"marker": case.marker, "rule": case.rule}, 201)

    async def calls(self, request: Request) -> Response:
        marker = request.query_params.get("marker")
        if not marker:
            return JSONResponse({"error": "marker query parameter required"}, 400)
        return _case_calls(self.state.snapshot, marker)

    async def forget(self, request: Request) -> Response:
        marker = request.query_params.get("marker")
        if marker and request.query_params.get("calls") == "1":  # take: its calls, and forget it
            return _case_calls(self.state.take, marker)
        try:
            n = self.state.forget(marker)
        except ReplayConfigError as exc:
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"deleted": n})

    async def diagnostics(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.state.clear_diagnostics()
        return JSONResponse({"diagnostics": self.state.diagnostics()})

    async def fetches(self, request: Request) -> Response:
        return JSONResponse({"fetches": self.state.fetches()})

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def files(self, request: Request) -> Response:
        self.state.note_fetch(request.url.path, request.headers)
        return await serve_file(request, request.path_params["name"])


def build_app(state: ReplayState) -> Starlette:
    ep = ReplayEndpoints(state)
    routes = [
        Route("/__gc/health", ep.health, methods=["GET"]),
        Route("/__gc/cases", ep.register, methods=["POST"]),
        Route("/__gc/cases", ep.forget, methods=["DELETE"]),
        Route("/__gc/calls", ep.calls, methods=["GET"]),
        Route("/__gc/diagnostics", ep.diagnostics, methods=["GET", "DELETE"]),
        Route("/__gc/fetches", ep.fetches, methods=["GET"]),
        Route("/__gc/files/{name:path}", ep.files, methods=["GET"]),
        Route("/{path:path}", ep.upstream, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]
    return Starlette(routes=routes)
