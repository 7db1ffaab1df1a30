"""OpenAI Responses read (OpenAI API reference: Responses, "Streaming events"; specs/responses/contract.md): what a
stream's events mean, and the Response a client ends with — the `response` of the terminal event
(`response.completed`, `response.incomplete`, `response.failed`), which is what openai-python's and openai-node's
stream helpers return as the final response. Pure; tolerant of garbage (what cannot be read is left out, the
grammar check says why)."""

from __future__ import annotations

import copy
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.reading import GatewayAnswer, Payload, StreamView

CREATED = "response.created"
IN_PROGRESS = "response.in_progress"
QUEUED = "response.queued"
ITEM_ADDED = "response.output_item.added"
ITEM_DONE = "response.output_item.done"
PART_ADDED = "response.content_part.added"
PART_DONE = "response.content_part.done"
TEXT_DELTA = "response.output_text.delta"
TEXT_DONE = "response.output_text.done"
REFUSAL_DELTA = "response.refusal.delta"
REFUSAL_DONE = "response.refusal.done"
ARGS_DELTA = "response.function_call_arguments.delta"
ARGS_DONE = "response.function_call_arguments.done"
CUSTOM_DELTA = "response.custom_tool_call_input.delta"
CUSTOM_DONE = "response.custom_tool_call_input.done"
COMPLETED = "response.completed"
INCOMPLETE = "response.incomplete"
FAILED = "response.failed"
ERROR = "error"
TERMINAL = (COMPLETED, INCOMPLETE, FAILED)
# The response's status each terminal event carries.
TERMINAL_STATUS = {COMPLETED: "completed", INCOMPLETE: "incomplete", FAILED: "failed"}


def kind(payload: Payload) -> str | None:
    """The payload's `type`, or None for a payload that is not an object with a string type."""
    value = payload.json
    found = value.get("type") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def carries_content(data: Any) -> bool:
    """An event that carries the answer itself (a `*.delta`: text, a call's arguments, a custom tool's input,
    reasoning), not only its framing: what `streamed` times."""
    return isinstance(data, dict) and str(data.get("type") or "").endswith(".delta")


def is_error(payload: Payload) -> bool:
    return kind(payload) == ERROR or payload.event.event == ERROR


def error_payloads(view: StreamView) -> list[Payload]:
    return [p for p in view.payloads if p.parsed is not None and is_error(p)]


def terminal(view: StreamView) -> dict[str, Any] | None:
    """The last terminal event's data, if the stream has one."""
    for payload in reversed(view.payloads):
        data: dict[str, Any] = payload.json
        if kind(payload) in TERMINAL and isinstance(data.get("response"), dict):
            return data
    return None


def assemble_view(view: StreamView) -> dict[str, Any]:
    """The Response a client ends with: the terminal event's `response`; without one, what the events built
    (response.created's response, its output the items done so far), so an expectation can say what is missing."""
    end = terminal(view)
    if end is not None:
        return copy.deepcopy(end["response"])
    built: dict[str, Any] = {}
    items: dict[int, Any] = {}
    for payload in view.payloads:
        data = payload.json
        if not isinstance(data, dict):
            continue
        if data.get("type") == CREATED and isinstance(data.get("response"), dict):
            built = copy.deepcopy(data["response"])
        elif data.get("type") == ITEM_DONE and isinstance(data.get("output_index"), int):
            items[data["output_index"]] = copy.deepcopy(data.get("item"))
    if built or items:
        built["output"] = [items[i] for i in sorted(items)]
    return built


def output_text(response: Any) -> str:
    """The text of every output_text part of the response's message items, joined (the SDKs' `output_text`)."""
    out: list[str] = []
    for item in reading.as_object(response).get("output") or []:
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        for part in item.get("content") or []:
            if (
                isinstance(part, dict)
                and part.get("type") == "output_text"
                and isinstance(part.get("text"), str)
            ):
                out.append(part["text"])
    return "".join(out)


def answer_document(exchange: Exchange) -> GatewayAnswer:
    """The Response: the JSON body, or the stream's final response."""
    return reading.answer(exchange, assemble_view, None)
