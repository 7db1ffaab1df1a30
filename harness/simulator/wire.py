"""The simulator's Anthropic Messages and OpenAI-compatible Chat Completions wire formats: read a request into
an `Ask`, write a `Generated` answer as JSON or as the family's stream events."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from typing import Any

from harness.errors import SimulatorRequestError
from harness.simulator import core

# --- Anthropic Messages ----------------------------------------------------------------------------


def anthropic_ask(body: Mapping[str, Any]) -> core.Ask:
    """Read a Messages request; a request Anthropic refuses raises SimulatorRequestError."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SimulatorRequestError("messages: field required")
    if not isinstance(body.get("max_tokens"), int):
        raise SimulatorRequestError("max_tokens: field required")
    system = body.get("system")
    tools = tuple(
        (t["name"], t.get("input_schema", {}))
        for t in body.get("tools") or []
        # A server tool (`type: web_search_20250305`, …) runs at the provider, which the simulator is not.
        if isinstance(t, Mapping) and isinstance(t.get("name"), str) and t.get("type") in (None, "custom")
    )
    prefixes, whole = _anthropic_cache_prefixes(body)
    choice = core.as_object(body.get("tool_choice"))
    forced = {"tool": choice.get("name"), "any": "*"}.get(str(choice.get("type")))
    thinking = body.get("thinking")
    wants_thinking = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    output = core.as_object(body.get("output_config"))
    fmt = core.as_object(output.get("format"))
    return core.Ask(
        prompt=core.last_user_text(messages),
        # Counted on the same text the cache prefixes are, so read + written never exceed the prompt.
        prompt_tokens=core.count_tokens(whole) + 3 * len(messages),
        max_tokens=body["max_tokens"],
        stops=tuple(s for s in body.get("stop_sequences") or [] if isinstance(s, str)),
        tools=tools,
        forced_tool=forced,
        tool_choice_none=choice.get("type") == "none",
        parallel=choice.get("disable_parallel_tool_use") is not True,
        after_tool_result=core.answers_tool_result(messages),
        thinking=wants_thinking,
        output_schema=fmt.get("schema") if fmt.get("type") == "json_schema" else None,
        cache_prefixes=prefixes,
        instructions=core.instruction_text(system, messages),
    )


def _anthropic_cache_prefixes(body: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
    """The request up to each `cache_control` breakpoint (tools, then system, then messages), and the whole
    request, as text."""
    seen: list[str] = []
    prefixes: list[str] = []

    def visit(blocks: Any, label: str) -> None:
        if isinstance(blocks, str):
            seen.append(f"{label}:{blocks}")
            return
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, Mapping):
                continue
            seen.append(f"{label}:{json.dumps({k: v for k, v in block.items() if k != 'cache_control'})}")
            if block.get("cache_control"):
                prefixes.append("\n".join(seen))

    visit(body.get("tools"), "tool")
    visit(body.get("system"), "system")
    for message in body.get("messages") or []:
        if isinstance(message, Mapping):
            visit(message.get("content"), str(message.get("role")))
    return tuple(prefixes), "\n".join(seen)


_ANTHROPIC_STOP = {
    "end": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool": "tool_use",
}


def anthropic_message(gen: core.Generated, model: str, message_id: str, signature: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if gen.thinking:
        content.append({"type": "thinking", "thinking": gen.thinking, "signature": signature})
    if gen.text or not gen.tool_calls:
        content.append({"type": "text", "text": gen.text})
    for call in gen.tool_calls:
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)})
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP[gen.stop],
        "stop_sequence": gen.stop_sequence,
        "usage": {
            "input_tokens": gen.input_tokens,
            "cache_creation_input_tokens": gen.cache_write,
            "cache_read_input_tokens": gen.cache_read,
            "output_tokens": gen.output_tokens,
            # wire-reference 1.7: the reasoning share of output_tokens
            "output_tokens_details": {"thinking_tokens": gen.thinking_tokens} if gen.thinking else None,
        },
    }


def anthropic_events(message: Mapping[str, Any], rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """The Messages stream for a finished message: (event name, data) pairs in wire order."""
    usage = message["usage"]
    start = {
        **{k: v for k, v in message.items() if k not in ("content", "stop_reason", "stop_sequence", "usage")},
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            head: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in core.pieces(block["text"], rng)]
        elif block["type"] == "thinking":
            head = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in core.pieces(block["thinking"], rng)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in core.pieces(json.dumps(block["input"]), rng)
            ]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": head})
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
                "usage": {
                    "output_tokens": usage["output_tokens"],
                    "output_tokens_details": usage["output_tokens_details"],
                },
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# --- OpenAI-compatible Chat Completions ------------------------------------------------------------


def openai_ask(body: Mapping[str, Any]) -> core.Ask:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SimulatorRequestError("messages: field required")
    all_text = " ".join(core.text_of(m.get("content")) for m in messages if isinstance(m, Mapping))
    tools = tuple(
        (t["function"]["name"], t["function"].get("parameters", {}))
        for t in body.get("tools") or []
        if isinstance(t, Mapping)
        and isinstance(t.get("function"), Mapping)
        and isinstance(t["function"].get("name"), str)
    )
    choice = body.get("tool_choice")
    forced: str | None = None
    if choice == "required":
        forced = "*"
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        forced = choice["function"].get("name")
    stop = body.get("stop")
    stops = (stop,) if isinstance(stop, str) else tuple(s for s in stop or [] if isinstance(s, str))
    fmt = core.as_object(body.get("response_format"))
    spec = core.as_object(fmt.get("json_schema"))
    effort = body.get("reasoning_effort")
    thinking = body.get("thinking")
    wants_thinking = (
        (isinstance(effort, str) and effort not in ("none", "minimal"))
        or body.get("enable_thinking") is True
        or (isinstance(thinking, Mapping) and thinking.get("type") == "enabled")
    )
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    return core.Ask(
        prompt=core.last_user_text(messages),
        prompt_tokens=core.count_tokens(all_text) + 3 * len(messages),
        max_tokens=core.max_tokens_of(limit, 4096),
        stops=stops,
        tools=tools,
        forced_tool=forced,
        tool_choice_none=choice == "none",
        parallel=body.get("parallel_tool_calls") is not False,
        after_tool_result=core.answers_tool_result(messages),
        thinking=wants_thinking,
        output_schema=spec.get("schema") if fmt.get("type") == "json_schema" else None,
        json_object=fmt.get("type") == "json_object",
        cache_prefixes=(all_text,),
        cache_auto=True,
        instructions=core.instruction_text(None, messages),
    )


_OPENAI_FINISH = {"end": "stop", "max_tokens": "length", "stop_sequence": "stop", "tool": "tool_calls"}


def openai_usage(gen: core.Generated) -> dict[str, Any]:
    prompt = gen.input_tokens + gen.cache_read + gen.cache_write
    return {
        "prompt_tokens": prompt,
        "completion_tokens": gen.output_tokens,
        "total_tokens": prompt + gen.output_tokens,
        "prompt_tokens_details": {"cached_tokens": gen.cache_read},
        "completion_tokens_details": {"reasoning_tokens": gen.thinking_tokens},
    }


def openai_completion(gen: core.Generated, model: str, completion_id: str, created: int) -> dict[str, Any]:
    # With tool calls, `content` is the sentence written before them (tool_choice auto), else null.
    message: dict[str, Any] = {"role": "assistant", "content": gen.text or (None if gen.tool_calls else "")}
    if gen.thinking:
        message["reasoning_content"] = gen.thinking
    if gen.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in gen.tool_calls
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": _OPENAI_FINISH[gen.stop]}
        ],
        "usage": openai_usage(gen),
    }


def openai_chunks(
    completion: Mapping[str, Any], include_usage: bool, rng: random.Random
) -> list[dict[str, Any]]:
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in core.pieces(message.get("reasoning_content") or "", rng)]
    out += [chunk({"content": p}) for p in core.pieces(message.get("content") or "", rng)]
    for index, call in enumerate(message.get("tool_calls") or []):
        fn = call["function"]
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": fn["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in core.pieces(fn["arguments"], rng)
        ]
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append({**base, "choices": [], "usage": completion["usage"]})
    return out


def with_choices_and_logprobs(
    completion: dict[str, Any], body: Mapping[str, Any], generate: Any
) -> dict[str, Any]:
    """The completion with `n` choices (index i generated by `generate(i)`) and, with `logprobs: true`, each
    text choice's `logprobs.content`: one entry per word piece, `top_logprobs` of them as alternatives."""
    n = body.get("n")
    count = n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1
    choices = [completion["choices"][0]]
    for i in range(1, count):
        other = openai_completion(
            generate(i), str(completion["model"]), completion["id"], completion["created"]
        )
        choices.append({**other["choices"][0], "index": i})
    if body.get("logprobs") is True:
        top = body.get("top_logprobs")
        width = top if isinstance(top, int) and not isinstance(top, bool) and top > 0 else 0
        for choice in choices:
            text = choice["message"].get("content") or ""
            tokens = [t for t in re.findall(r"\s*\S+", text)]

            def entry(t: str) -> dict[str, Any]:
                return {"token": t, "logprob": -0.01, "bytes": list(t.encode())}

            choice["logprobs"] = {
                "content": [
                    {**entry(t), "top_logprobs": [entry(t)][:width] + [entry(" ")] * max(width - 1, 0)}
                    for t in tokens
                ],
                "refusal": None,
            }
    return {**completion, "choices": choices}
