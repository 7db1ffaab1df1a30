"""OpenAI's Responses API played by the simulator (`POST …/responses`), from the request alone.

The request is read as the Chat Completions request it amounts to (`input` items as messages, `instructions`
first, flat function tools, `text.format`, `reasoning.effort`, `max_output_tokens`; a custom (freeform) tool as a
function taking its text, its call answered as a `custom_tool_call` with that text as `input`, as OpenAI answers
one), generated like every other family (harness.simulator.core), and answered as a Response object or its event
stream, built with the
cassettes' own builders (harness/cassette/synthesize/responses.py), so both say the same in the same shape. The
Response repeats the request's parameters; a reasoning item's summary is there only when `reasoning.summary`
asks for it, its `encrypted_content` only with `include: ["reasoning.encrypted_content"]`. The simulator keeps
nothing: `previous_response_id` is refused (404, as OpenAI answers an id it does not have).
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Mapping
from typing import Any

from harness.cassette.synthesize import responses as build
from harness.errors import SimulatorRequestError
from harness.simulator import core, wire

# A custom tool is generated for as a function taking its text (what the model writes is its freeform input).
CUSTOM_PARAMETERS = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}


def _custom_names(body: Mapping[str, Any]) -> set[str]:
    return {
        str(t["name"])
        for t in body.get("tools") or []
        if isinstance(t, Mapping) and t.get("type") == "custom" and isinstance(t.get("name"), str)
    }


def _text(content: Any) -> Any:
    """An item's content as a chat message's: a string, or its parts' text joined."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))


def chat_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions request a Responses request amounts to (raises SimulatorRequestError)."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    given = body.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else given
    if not isinstance(items, list) or not items:
        raise SimulatorRequestError("input: a string or a non-empty list of items is required")
    for item in items:
        item = core.as_object(item)
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": str(item.get("role", "user")), "content": _text(item.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            arguments = item.get("arguments", "")
            if kind == "custom_tool_call":
                arguments = json.dumps({"input": str(item.get("input") or "")})
            call = {"id": item.get("call_id"), "type": "function"}
            call["function"] = {"name": item.get("name"), "arguments": arguments}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _text(output)})
    tools = [
        {"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters") if k in t}}
        for t in body.get("tools") or []
        if isinstance(t, Mapping) and t.get("type") == "function"
    ]
    tools += [
        {"type": "function", "function": {"name": name, "parameters": CUSTOM_PARAMETERS}}
        for name in sorted(_custom_names(body))
    ]
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if tools:
        chat["tools"] = tools
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("function", "custom"):
        chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif isinstance(choice, str):
        chat["tool_choice"] = choice
    for field in ("parallel_tool_calls", "temperature", "top_p"):
        if field in body:
            chat[field] = body[field]
    if body.get("max_output_tokens") is not None:
        chat["max_completion_tokens"] = body["max_output_tokens"]
    effort = core.as_object(body.get("reasoning")).get("effort")
    if isinstance(effort, str):
        chat["reasoning_effort"] = effort
    fmt = core.as_object(core.as_object(body.get("text")).get("format"))
    if fmt.get("type") == "json_schema":
        chat["response_format"] = {"type": "json_schema", "json_schema": {"schema": fmt.get("schema")}}
    elif fmt.get("type") == "json_object":
        chat["response_format"] = {"type": "json_object"}
    return chat


def answer(body: Mapping[str, Any], rng: random.Random, cache: core.PrefixCache) -> tuple[str, Any]:
    """("json", a Response object) or ("sse", its events) for one request."""
    gen = core.generate(wire.openai_ask(chat_body(body)), rng, cache, "call_")
    completion = wire.openai_completion(gen, str(body.get("model")), "", 0)
    finish = completion["choices"][0]["finish_reason"]
    reasoning = core.as_object(body.get("reasoning"))
    given = body.get("include")
    include: list[Any] = given if isinstance(given, list) else []
    said: dict[str, Any] = {
        "finish": finish,
        "usage": {
            **completion["usage"],
            "prompt_tokens_details": {"cached_tokens": gen.cache_read, "cache_write_tokens": gen.cache_write},
        },
        "summary": reasoning.get("summary") is not None,
        "encrypted": "reasoning.encrypted_content" in include,
    }
    if gen.thinking:
        said["reasoning_content"] = core.pieces(gen.thinking, rng)
    if gen.text:
        said["content"] = core.pieces(gen.text, rng)
    if gen.tool_calls:
        said["tool_calls"] = [
            {"id": c.id, "name": c.name, "pieces": core.pieces(json.dumps(c.arguments), rng)}
            for c in gen.tool_calls
        ]
        custom = _custom_names(body)
        for call in said["tool_calls"]:
            if call["name"] in custom:  # a custom tool's call: its freeform text (a custom_tool_call's input)
                arguments = json.loads("".join(call["pieces"]))
                text = arguments.get("input") if isinstance(arguments, dict) else None
                call["input"] = text if isinstance(text, str) else json.dumps(arguments)
    name = f"simulated/{secrets.token_hex(8)}"
    model = str(body.get("model"))
    echo = dict(body)
    if body.get("stream") is not True:
        return "json", build.response(name, model, said, echo=echo)
    return "sse", build.events(name, model, said, echo=echo)
