"""The Responses surface's kept responses and its error envelope, shared by its bridged path (responses.py) and
its native pass-through (responses_native.py).

A response is kept on the gateway's store (`--state-url`: SQLite by default, Redis for several workers; an
in-process store when none is configured) for 30 days: the Response object, and the conversation it ends — as
chat messages (`conversation`, what the bridge replays through the chat flow) or as Responses items (`items`,
what the native path sends a Responses upstream in place of `previous_response_id`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from reference_gateway import fastjson
from reference_gateway.errors import note_answered, passed_header
from reference_gateway.flows.relay_store import StateStore, open_store
from reference_gateway.services import Services
from reference_gateway.web.body import BodyError
from reference_gateway.web.body import parse_json as parse_body
from reference_gateway.web.intake import read_body

KEPT_SECONDS = 30 * 24 * 3600  # how long a stored response can be continued or retrieved
_PREFIX = "responses:"


class MemoryStore:
    """The in-process store when the gateway has no --state-url: lost when the process ends."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[bytes, float]] = {}

    async def get(self, key: str) -> bytes | None:
        found = self._entries.get(key)
        return found[0] if found is not None and found[1] > time.time() else None

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        self._entries[key] = (value, time.time() + ttl)

    async def claim(
        self, key: str, ttl: float
    ) -> str | None:  # not used here; the StateStore protocol has it
        return None

    async def release(self, key: str, token: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


_STORES: dict[int, StateStore] = {}


def store(services: Services) -> StateStore:
    """The store of this gateway process (one per Services), opened on first use."""
    found = _STORES.get(id(services))
    if found is None:
        url = services.settings.state_url
        found = open_store(url, services.hooks.clock) if url else MemoryStore()
        _STORES[id(services)] = found
    return found


async def load(services: Services, response_id: str) -> dict[str, Any] | None:
    raw = await store(services).get(_PREFIX + response_id)
    record = _parsed(raw) if raw else None
    return record if isinstance(record, dict) else None


def _dumped(record: dict[str, Any]) -> bytes:
    """A record's JSON: orjson's bytes (fastjson; a few KB written on every kept request), or the standard library's
    escapes where a provider's answer held a lone surrogate (which no UTF-8 can hold)."""
    try:
        return fastjson.dumps(record)
    except ValueError:
        return json.dumps(record).encode()


def _parsed(raw: bytes) -> Any:
    try:
        return fastjson.loads(raw.decode("utf-8"))
    except ValueError:
        return None


async def keep(
    services: Services,
    response: dict[str, Any],
    conversation: list[dict[str, Any]],
    items: list[Any] | None = None,
    inputs: list[Any] | None = None,
) -> None:
    """A response kept: the Response, the conversation it ends (chat messages, or Responses `items` on the native
    path), and `inputs`, the request's own input items, which `GET …/responses/{id}/input_items` lists."""
    record: dict[str, Any] = {"response": response, "conversation": conversation, "inputs": inputs or []}
    if items is not None:
        record["items"] = items
    await store(services).put(_PREFIX + str(response["id"]), _dumped(record), KEPT_SECONDS)


async def forget(services: Services, response_id: str) -> None:
    await store(services).put(_PREFIX + response_id, b"", 1e-6)  # expired at once: gone


def error(
    status: int,
    message: str,
    kind: str | None = None,
    param: str | None = None,
    code: str | None = None,
    headers: Any = None,
) -> Response:
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    note_answered(status, kind, code, param)
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    kept = {k: v for k, v in (headers or {}).items() if passed_header(k)}
    return JSONResponse(body, status_code=status, headers=kept)


def listed_inputs(record: dict[str, Any], order: str, limit: int) -> dict[str, Any]:
    """`GET …/responses/{id}/input_items` (Responses: List input items): the kept request's input items as a list
    object, newest first unless `order` is asc; each message item with its id, type and content parts, as OpenAI
    lists them (a string content as one `input_text` part)."""
    items: list[dict[str, Any]] = []
    for i, item in enumerate(record.get("inputs") or []):
        if not isinstance(item, dict):
            continue
        shown = dict(item)
        if shown.get("type", "message") == "message":
            shown["type"] = "message"
            content = shown.get("content")
            if isinstance(content, str):
                kind = "output_text" if shown.get("role") == "assistant" else "input_text"
                shown["content"] = [{"type": kind, "text": content}]
            shown.setdefault("status", "completed")
        shown.setdefault("id", f"item_{str(record['response'].get('id', ''))[5:21]}_{i:03d}")
        items.append(shown)
    if order != "asc":
        items.reverse()
    page = items[:limit]
    return {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(items) > len(page),
    }


async def request_object(services: Services, request: Request) -> tuple[bytes, dict[str, Any]] | Response:
    """A Responses request's bytes and body: the client authenticated, the body read within the gateway's limit and
    parsed with the chat path's limits (web/body.py: nesting, numbers a float holds, Unicode text); a body that is not
    a JSON object is the 400 answered instead."""
    services.intake.authenticate(request)
    raw = await read_body(request, services.settings.max_body_bytes)
    try:
        body = parse_body(raw)
    except BodyError as exc:
        return error(400, f"We could not parse the JSON body of your request: {exc.problem}")
    if not isinstance(body, dict):
        return error(400, "The request body must be a JSON object.")
    return raw, body
