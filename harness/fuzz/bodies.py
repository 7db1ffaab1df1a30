"""The request bodies of each inbound surface the fuzz speaks (Chat Completions, Anthropic Messages, OpenAI
Responses): the request schema its well-formed bodies come from, the plainest valid body (one user message),
and the places a hostile value goes — where a gateway reads, translates or forwards a value.

Chat Completions bodies come from its wire schema (`specs/schema/wire/openai.chat.completion.request`); Messages and
Responses from the fuzz's own schemas in `harness/fuzz/schemas/`: the Messages wire schema uses keywords the
fuzz's schema walker does not read (if/then/else, allOf), and the wire schemas have no Responses request yet.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.paths import schema_path

HOLE = "__gc_fuzz_hole__"
_OWN_SCHEMAS = Path(__file__).resolve().parent / "schemas"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The request schema `name`: the wire schema (specs/schema/wire), else the fuzz's own of that name."""
    own = _OWN_SCHEMAS / f"{name}.schema.json"
    try:
        path = schema_path(name)
    except FileNotFoundError:
        path = own
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@dataclass(frozen=True)
class Bodies:
    """One surface's bodies: `plain(model, text, stream)` is one user message; `hole(spot, model, stream)` a small
    valid body whose value at `spot` is `HOLE` (replaced by raw hostile JSON text)."""

    surface: str
    schema: str
    spots: tuple[str, ...]
    plain: Callable[[str, str, bool], dict[str, Any]]
    hole: Callable[[str, str, bool], dict[str, Any]]


# --------------------------------------------------------------------------------------- Chat Completions

CHAT_SPOTS = ("content", "model", "system", "stop", "temperature", "top_p", "max_tokens", "tool-name",
              "tool-schema", "response-format-schema", "metadata", "user", "image-url", "tool-call-arguments")  # fmt: skip


def _chat_plain(model: str, text: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": text}]}
    if stream:
        body["stream"] = True
    return body


def _chat_hole(spot: str, model: str, stream: bool) -> dict[str, Any]:
    body = _chat_plain(model, "hi", stream)
    if spot == "model":
        body["model"] = HOLE
    elif spot == "content":
        body["messages"][0]["content"] = HOLE
    elif spot == "system":
        body["messages"].insert(0, {"role": "system", "content": HOLE})
    elif spot == "tool-name":
        body["tools"] = [{"type": "function", "function": {"name": HOLE, "parameters": {"type": "object"}}}]
    elif spot == "tool-schema":
        params = {"type": "object", "properties": {"a": {"type": "number", "maximum": HOLE}}}
        body["tools"] = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    elif spot == "response-format-schema":
        schema = {"type": "object", "properties": {"a": {"default": HOLE}}, "additionalProperties": False}
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    elif spot == "image-url":
        part = {"type": "image_url", "image_url": {"url": HOLE}}
        body["messages"][0]["content"] = [{"type": "text", "text": "what is it?"}, part]
    elif spot == "tool-call-arguments":
        call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": HOLE}}
        body["messages"] += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ]
    elif spot == "metadata":
        body["metadata"] = {"k": HOLE}
    else:
        body[spot] = HOLE
    return body


# --------------------------------------------------------------------------------------- Anthropic Messages

MESSAGES_SPOTS = ("content", "model", "system", "stop_sequences", "temperature", "top_p", "top_k", "max_tokens",
                  "tool-name", "tool-schema", "metadata", "image-url", "tool-use-input", "tool-result",
                  "thinking-budget")  # fmt: skip


def _messages_plain(model: str, text: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": text}]}
    if stream:
        body["stream"] = True
    return body


def _messages_hole(spot: str, model: str, stream: bool) -> dict[str, Any]:
    body = _messages_plain(model, "hi", stream)
    user = body["messages"][0]
    if spot == "model":
        body["model"] = HOLE
    elif spot == "content":
        user["content"] = HOLE
    elif spot == "system":
        body["system"] = [{"type": "text", "text": HOLE}]
    elif spot == "tool-name":
        body["tools"] = [{"name": HOLE, "input_schema": {"type": "object"}}]
    elif spot == "tool-schema":
        body["tools"] = [{"name": "f", "input_schema": {"type": "object", "properties": {"a": HOLE}}}]
    elif spot == "metadata":
        body["metadata"] = {"user_id": HOLE}
    elif spot == "image-url":
        user["content"] = [{"type": "text", "text": "what is it?"}, {"type": "image", "source": {"type": "url", "url": HOLE}}]  # fmt: skip
    elif spot in ("tool-use-input", "tool-result"):
        use = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "f",
            "input": HOLE if spot == "tool-use-input" else {},
        }
        result = {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": HOLE if spot == "tool-result" else "ok",
        }
        body["tools"] = [{"name": "f", "input_schema": {"type": "object"}}]
        body["messages"] += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    elif spot == "thinking-budget":
        body["max_tokens"] = 4096
        body["thinking"] = {"type": "enabled", "budget_tokens": HOLE}
    else:
        body[spot] = HOLE
    return body


# --------------------------------------------------------------------------------------- OpenAI Responses

RESPONSES_SPOTS = ("input", "input-item-content", "model", "instructions", "temperature", "top_p",
                   "max_output_tokens", "tool-name", "tool-schema", "text-format-schema", "metadata", "user",
                   "image-url", "function-call-output", "function-call-arguments", "previous_response_id",
                   "reasoning", "include")  # fmt: skip


def _responses_plain(model: str, text: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "input": text}
    if stream:
        body["stream"] = True
    return body


def _responses_hole(spot: str, model: str, stream: bool) -> dict[str, Any]:
    body = _responses_plain(model, "hi", stream)
    if spot == "model":
        body["model"] = HOLE
    elif spot == "input":
        body["input"] = HOLE
    elif spot == "input-item-content":
        body["input"] = [{"role": "user", "content": HOLE}]
    elif spot == "tool-name":
        body["tools"] = [{"type": "function", "name": HOLE, "parameters": {"type": "object"}}]
    elif spot == "tool-schema":
        params = {"type": "object", "properties": {"a": {"type": "number", "maximum": HOLE}}}
        body["tools"] = [{"type": "function", "name": "f", "parameters": params}]
    elif spot == "text-format-schema":
        schema = {"type": "object", "properties": {"a": {"default": HOLE}}, "additionalProperties": False}
        body["text"] = {"format": {"type": "json_schema", "name": "x", "schema": schema}}
    elif spot == "metadata":
        body["metadata"] = {"k": HOLE}
    elif spot == "image-url":
        parts = [{"type": "input_text", "text": "what is it?"}, {"type": "input_image", "image_url": HOLE}]
        body["input"] = [{"role": "user", "content": parts}]
    elif spot in ("function-call-output", "function-call-arguments"):
        call = {"type": "function_call", "call_id": "call_1", "name": "f",
                "arguments": HOLE if spot == "function-call-arguments" else "{}"}  # fmt: skip
        output = {"type": "function_call_output", "call_id": "call_1",
                  "output": HOLE if spot == "function-call-output" else "ok"}  # fmt: skip
        body["tools"] = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
        body["input"] = [{"role": "user", "content": "hi"}, call, output]
    elif spot == "reasoning":
        body["reasoning"] = {"effort": HOLE}
    else:
        body[spot] = HOLE
    return body


BODIES: Mapping[str, Bodies] = {
    "chat-completions": Bodies(
        "chat-completions", "openai.chat.completion.request", CHAT_SPOTS, _chat_plain, _chat_hole
    ),
    "messages": Bodies(
        "messages", "anthropic.messages.fuzz-request", MESSAGES_SPOTS, _messages_plain, _messages_hole
    ),
    "responses": Bodies(
        "responses", "openai.responses.request", RESPONSES_SPOTS, _responses_plain, _responses_hole
    ),
}


def bodies_for(surface: str) -> Bodies | None:
    """The fuzz's bodies for a surface; None: a surface the fuzz does not speak."""
    return BODIES.get(surface)
