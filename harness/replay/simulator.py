"""A generative fake provider for testing live mode offline: it answers from the request alone, as a real model
does structurally (Anthropic Messages and OpenAI-compatible Chat Completions).

It never reads case markers, rule ids or cassettes — a rule tuned to it would fail against a real provider. Its
answers vary from call to call (text length, ids, the byte offsets a stream is cut at) the way a model's do;
what a model guarantees it honours: `max_tokens` with the right stop reason, stop sequences, forced and automatic
tool choice with arguments generated from the tool's input schema, thinking when asked, a `response_format` /
`output_config.format` schema, prompt-cache writes then reads for a repeated prefix.

Pure: the caller passes the random source and the prefix cache; nothing here does I/O or reads the clock.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Anthropic's smallest cacheable prefix for most models (prompt caching docs); shorter prefixes are not cached.
MIN_CACHEABLE_TOKENS = 1024
# OpenAI-compatible providers cache prompts of at least this many tokens automatically.
OPENAI_MIN_CACHED_TOKENS = 1024
_WORDS = tuple(
    [
        "the",
        "answer",
        "depends",
        "on",
        "what",
        "you",
        "need",
        "here",
        "is",
        "a",
        "short",
        "reply",
        "with",
        "a",
        "few",
        "plain",
        "words",
        "that",
        "vary",
        "from",
        "one",
        "call",
        "to",
        "the",
        "next",
        "as",
        "a",
        "real",
        "model",
        "would",
    ]
)
_THOUGHT = "Let me think about the question step by step before answering it."


class SimulatorRequestError(ValueError):
    """A request the provider would refuse with a 400 (the message says why; no prompt text in it)."""


def count_tokens(text: str) -> int:
    """A provider-like estimate: about four characters per token, at least one for non-empty text."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass
class PrefixCache:
    """Prompt-cache entries by prefix hash (the simulator's only state; one per running simulator)."""

    entries: set[str] = field(default_factory=set)

    def use(self, prefix: str) -> bool:
        """True when `prefix` was cached before (a read); otherwise it is written now."""
        key = hashlib.sha256(prefix.encode()).hexdigest()
        if key in self.entries:
            return True
        self.entries.add(key)
        return False


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Generated:
    """One answer, independent of the wire format."""

    text: str
    stop: str  # "end" | "max_tokens" | "stop_sequence" | "tool"
    stop_sequence: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0


# --- reading a request -----------------------------------------------------------------------------


def as_object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                for key in ("text", "thinking", "content"):
                    if isinstance(part.get(key), (str, list)):
                        parts.append(_text_of(part[key]))
        return " ".join(p for p in parts if p)
    return ""


def _last_user_text(messages: Sequence[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _instruction_text(system: Any, messages: Sequence[Any]) -> str:
    """The text a model takes instructions from: the system prompt and every system, developer and user turn."""
    turns = [
        _text_of(m.get("content"))
        for m in messages
        if isinstance(m, Mapping) and m.get("role") in ("system", "developer", "user")
    ]
    return " ".join(t for t in (_text_of(system), *turns) if t)


# Instructions a model follows to the letter, whoever gives them (system prompt or user): the only word to
# reply with, and counting.
_ONLY_WORD_RE = re.compile(r"\breply with only the word\W+([A-Za-z]+)", re.IGNORECASE)
_COUNT_RE = re.compile(r"\bcount from (\d{1,3}) to (\d{1,3})\b", re.IGNORECASE)


def _instructed_text(instructions: str, prompt: str) -> str | None:
    """The reply an explicit instruction fixes (the last "reply with only the word X"; "count from A to B"),
    or None when nothing in the conversation fixes it."""
    words = _ONLY_WORD_RE.findall(instructions)
    if words:
        return str(words[-1])
    count = _COUNT_RE.search(prompt)
    if count:
        low, high = int(count.group(1)), int(count.group(2))
        if low <= high:
            return ", ".join(str(n) for n in range(low, high + 1)) + "."
    return None


def _answers_tool_result(messages: Sequence[Any]) -> bool:
    """The conversation's last turn hands back a tool result: a model answers it in text."""
    if not messages or not isinstance(messages[-1], Mapping):
        return False
    last = messages[-1]
    if last.get("role") == "tool":
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(p, Mapping) and p.get("type") == "tool_result" for p in content
    )


def _max_tokens(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


# --- generating ------------------------------------------------------------------------------------


def value_for_schema(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value valid against a (simple) JSON Schema: required properties, enums, types, array bounds."""
    if not isinstance(schema, Mapping):
        return "value"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return value_for_schema(schema[key][0], rng, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = as_object(schema.get("properties"))
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        names = list(dict.fromkeys([*required, *(list(props) if depth < 3 else [])]))
        return {name: value_for_schema(props.get(name, {}), rng, depth + 1) for name in names}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [value_for_schema(schema.get("items", {}), rng, depth + 1) for _ in range(count)]
    if kind == "integer":
        low = schema.get("minimum", 1)
        high = schema.get("maximum", max(low, 1) + 9)
        return rng.randint(int(low), int(high))
    if kind == "number":
        low = float(schema.get("minimum", 0))
        return round(low + rng.random() * 10, 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    text = rng.choice(_WORDS)
    low_len = int(schema.get("minLength", 0))
    return (text * (low_len // len(text) + 1))[: max(low_len, len(text))]


def _cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, str | None]:
    found = [(text.find(s), s) for s in stops if s and s in text]
    if not found:
        return text, None
    at, stop = min(found)
    return text[:at], stop


def _prose(prompt: str, rng: random.Random) -> str:
    """A reply that takes up the prompt's words (so a stop sequence the prompt makes likely appears), then a
    varying number of plain words."""
    echoed = prompt.split()[:12]
    filler = [rng.choice(_WORDS) for _ in range(rng.randint(2, 14))]
    head = ("You said: " + " ".join(echoed) + ". ") if echoed else ""
    return head + " ".join(filler).capitalize() + "."


def _limit(text: str, max_tokens: int) -> tuple[str, bool]:
    """The longest prefix of `text` that fits `max_tokens`; True when it had to be cut."""
    if count_tokens(text) <= max_tokens:
        return text, False
    return text[: max_tokens * 4].rstrip() or text[:1], True


@dataclass(frozen=True)
class Ask:
    """What a request asks of the model, read from either wire format."""

    prompt: str  # the last user turn's text
    prompt_tokens: int
    max_tokens: int
    stops: tuple[str, ...]
    tools: tuple[tuple[str, Any], ...]  # (name, input schema)
    forced_tool: str | None  # a named tool, "*" for any/required, None for auto, "" for none
    tool_choice_none: bool
    parallel: bool  # may call several tools in one turn
    after_tool_result: bool
    thinking: bool
    output_schema: Any  # a JSON Schema the text must validate against, or None
    json_object: bool = False
    # Anthropic: the request up to its last cache breakpoint; OpenAI-compatible (cache_auto): the whole prompt.
    cache_prefix: str | None = None
    cache_auto: bool = False
    instructions: str = ""  # system prompt plus system, developer and user turns (_instruction_text)


def generate(ask: Ask, rng: random.Random, cache: PrefixCache, id_prefix: str) -> Generated:
    thinking = _THOUGHT if ask.thinking else ""
    thinking_tokens = count_tokens(thinking)
    budget = max(ask.max_tokens - thinking_tokens, 1) if thinking else ask.max_tokens
    cache_read = cache_write = 0
    explicit = ask.cache_prefix is not None and not ask.cache_auto
    if explicit and count_tokens(ask.cache_prefix or "") >= MIN_CACHEABLE_TOKENS:
        size = count_tokens(ask.cache_prefix or "")
        if cache.use(ask.cache_prefix or ""):
            cache_read = size
        else:
            cache_write = size
    elif ask.cache_auto and ask.cache_prefix and count_tokens(ask.cache_prefix) >= OPENAI_MIN_CACHED_TOKENS:
        # Automatic caching in 128-token steps: the longest such prefix of the prompt seen before is read.
        size = count_tokens(ask.cache_prefix)
        steps = [n for n in range(OPENAI_MIN_CACHED_TOKENS, size + 1, 128)]
        hits = [n for n in steps if cache.use("auto:" + ask.cache_prefix[: n * 4])]
        cache_read = max(hits, default=0)
    input_tokens = max(ask.prompt_tokens - cache_read - cache_write, 0)
    wants_tool = ask.tools and not ask.tool_choice_none and not ask.after_tool_result
    lowered = ask.prompt.lower()
    mentioned = [t for t in ask.tools if _mentions(lowered, t[0])]
    chosen: list[tuple[str, Any]] = []
    if wants_tool and ask.forced_tool and ask.forced_tool != "*":
        chosen = [t for t in ask.tools if t[0] == ask.forced_tool][:1] or [ask.tools[0]]
    elif wants_tool and ask.forced_tool == "*":
        chosen = mentioned or [ask.tools[0]]
    elif wants_tool and ask.forced_tool is None:
        chosen = mentioned  # the turn is about these tools: a model calls each of them
    if chosen and not ask.parallel:
        chosen = chosen[:1]
    if chosen:
        calls = tuple(
            ToolCall(f"{id_prefix}{rng.getrandbits(64):016x}", name, value_for_schema(schema, rng))
            for name, schema in chosen
        )
        out_tokens = sum(count_tokens(json.dumps(c.arguments)) for c in calls) + thinking_tokens
        return Generated(
            "",
            "tool",
            tool_calls=calls,
            thinking=thinking,
            input_tokens=input_tokens,
            output_tokens=out_tokens,
            thinking_tokens=thinking_tokens,
            cache_read=cache_read,
            cache_write=cache_write,
        )
    if ask.output_schema is not None:
        text = json.dumps(value_for_schema(ask.output_schema, rng))
    elif ask.json_object:
        text = json.dumps({"answer": " ".join(rng.choice(_WORDS) for _ in range(3))})
    else:
        text = _instructed_text(ask.instructions, ask.prompt) or _prose(ask.prompt, rng)
    text, stop_sequence = _cut_at_stop(text, ask.stops)
    text, cut = _limit(text, budget)
    stop = "max_tokens" if cut else "stop_sequence" if stop_sequence else "end"
    return Generated(
        text,
        stop,
        stop_sequence=stop_sequence if stop == "stop_sequence" else None,
        thinking=thinking,
        input_tokens=input_tokens,
        output_tokens=count_tokens(text) + thinking_tokens,
        thinking_tokens=thinking_tokens,
        cache_read=cache_read,
        cache_write=cache_write,
    )


def _mentions(lowered_prompt: str, tool_name: str) -> bool:
    """A model calls a tool when the turn is about it: the tool's name, or a word of it (`weather` for
    `get_weather`), appears in the prompt."""
    name = tool_name.lower()
    words = [w for w in re.split(r"[^a-z0-9]+", name) if len(w) >= 4]
    prompt_words = set(re.split(r"[^a-z0-9]+", lowered_prompt))
    return name in lowered_prompt or any(w in prompt_words for w in words)


# --- Anthropic Messages ----------------------------------------------------------------------------


def anthropic_ask(body: Mapping[str, Any]) -> Ask:
    """Read a Messages request; a request Anthropic refuses raises SimulatorRequestError."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SimulatorRequestError("messages: field required")
    if not isinstance(body.get("max_tokens"), int):
        raise SimulatorRequestError("max_tokens: field required")
    system = body.get("system")
    system_text = _text_of(system)
    all_text = (
        system_text + " " + " ".join(_text_of(m.get("content")) for m in messages if isinstance(m, dict))
    )
    tools = tuple(
        (t["name"], t.get("input_schema", {}))
        for t in body.get("tools") or []
        if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    )
    choice = as_object(body.get("tool_choice"))
    forced = {"tool": choice.get("name"), "any": "*"}.get(str(choice.get("type")))
    thinking = body.get("thinking")
    wants_thinking = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    output = as_object(body.get("output_config"))
    fmt = as_object(output.get("format"))
    return Ask(
        prompt=_last_user_text(messages),
        prompt_tokens=count_tokens(all_text) + 3 * len(messages),
        max_tokens=body["max_tokens"],
        stops=tuple(s for s in body.get("stop_sequences") or [] if isinstance(s, str)),
        tools=tools,
        forced_tool=forced,
        tool_choice_none=choice.get("type") == "none",
        parallel=choice.get("disable_parallel_tool_use") is not True,
        after_tool_result=_answers_tool_result(messages),
        thinking=wants_thinking,
        output_schema=fmt.get("schema") if fmt.get("type") == "json_schema" else None,
        cache_prefix=_anthropic_cache_prefix(body),
        instructions=_instruction_text(system, messages),
    )


def _anthropic_cache_prefix(body: Mapping[str, Any]) -> str | None:
    """The request up to its last `cache_control` breakpoint (tools, then system, then messages), as text."""
    seen: list[str] = []
    prefix: str | None = None

    def visit(blocks: Any, label: str) -> None:
        nonlocal prefix
        if isinstance(blocks, str):
            seen.append(f"{label}:{blocks}")
            return
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, Mapping):
                continue
            seen.append(f"{label}:{json.dumps({k: v for k, v in block.items() if k != 'cache_control'})}")
            if block.get("cache_control"):
                prefix = "\n".join(seen)

    visit(body.get("tools"), "tool")
    visit(body.get("system"), "system")
    for message in body.get("messages") or []:
        if isinstance(message, Mapping):
            visit(message.get("content"), str(message.get("role")))
    return prefix


_ANTHROPIC_STOP = {
    "end": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool": "tool_use",
}


def anthropic_message(gen: Generated, model: str, message_id: str, signature: str) -> dict[str, Any]:
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


def _pieces(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        step = rng.randint(1, 12)
        out.append(text[i : i + step])
        i += step
    return out


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
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"], rng)]
        elif block["type"] == "thinking":
            head = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"], rng)]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(json.dumps(block["input"]), rng)
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


def openai_ask(body: Mapping[str, Any]) -> Ask:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SimulatorRequestError("messages: field required")
    all_text = " ".join(_text_of(m.get("content")) for m in messages if isinstance(m, Mapping))
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
    fmt = as_object(body.get("response_format"))
    spec = as_object(fmt.get("json_schema"))
    effort = body.get("reasoning_effort")
    thinking = body.get("thinking")
    wants_thinking = (
        (isinstance(effort, str) and effort not in ("none", "minimal"))
        or body.get("enable_thinking") is True
        or (isinstance(thinking, Mapping) and thinking.get("type") == "enabled")
    )
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    return Ask(
        prompt=_last_user_text(messages),
        prompt_tokens=count_tokens(all_text) + 3 * len(messages),
        max_tokens=_max_tokens(limit, 4096),
        stops=stops,
        tools=tools,
        forced_tool=forced,
        tool_choice_none=choice == "none",
        parallel=body.get("parallel_tool_calls") is not False,
        after_tool_result=_answers_tool_result(messages),
        thinking=wants_thinking,
        output_schema=spec.get("schema") if fmt.get("type") == "json_schema" else None,
        json_object=fmt.get("type") == "json_object",
        cache_prefix=all_text,
        cache_auto=True,
        instructions=_instruction_text(None, messages),
    )


_OPENAI_FINISH = {"end": "stop", "max_tokens": "length", "stop_sequence": "stop", "tool": "tool_calls"}


def openai_usage(gen: Generated) -> dict[str, Any]:
    prompt = gen.input_tokens + gen.cache_read + gen.cache_write
    return {
        "prompt_tokens": prompt,
        "completion_tokens": gen.output_tokens,
        "total_tokens": prompt + gen.output_tokens,
        "prompt_tokens_details": {"cached_tokens": gen.cache_read},
        "completion_tokens_details": {"reasoning_tokens": gen.thinking_tokens},
    }


def openai_completion(gen: Generated, model: str, completion_id: str, created: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": gen.text if not gen.tool_calls else None}
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
    out += [chunk({"reasoning_content": p}) for p in _pieces(message.get("reasoning_content") or "", rng)]
    out += [chunk({"content": p}) for p in _pieces(message.get("content") or "", rng)]
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
            for p in _pieces(fn["arguments"], rng)
        ]
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append({**base, "choices": [], "usage": completion["usage"]})
    return out


def cut_bytes(data: bytes, rng: random.Random) -> list[bytes]:
    """A stream's bytes cut at arbitrary offsets (inside events, inside UTF-8 sequences), as networks do."""
    out, i = [], 0
    while i < len(data):
        step = rng.randint(1, 97)
        out.append(data[i : i + step])
        i += step
    return out


def sse(events: Sequence[tuple[str | None, Any]]) -> bytes:
    lines = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        lines.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(lines).encode()
