"""A generative fake provider for testing live mode and rehearsing `record` offline: it answers from the request
alone, as a real model does structurally (the family formats live in sim_wire.py and sim_gemini.py).

It never reads case markers, rule ids or cassettes — a rule tuned to it would fail against a real provider. Its
answers vary from call to call (text length, ids, the byte offsets a stream is cut at) the way a model's do;
what a model guarantees it honours: `max_tokens` with the right stop reason, stop sequences, forced and automatic
tool choice with arguments generated from the tool's input schema (under automatic choice a sentence of text
comes first, as models write), thinking when asked, an output schema, prompt-cache writes then reads for a
repeated prefix of at least the provider's minimum cacheable length.

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

# Anthropic's smallest cacheable prefix "for most models" (prompt caching docs: 1,024 tokens; some Haiku models
# need more); a shorter prefix with a breakpoint is simply not cached, without an error.
MIN_CACHEABLE_TOKENS = 1024
# OpenAI caches prompts of 1,024 tokens or more automatically, the cached share growing in 128-token steps
# (prompt caching guide); OpenAI-compatible providers that report cached_tokens follow the same scheme.
OPENAI_MIN_CACHED_TOKENS = 1024
OPENAI_CACHE_STEP = 128
# Gemini's implicit caching starts at 1,024 tokens for 2.5 Flash (the model every Gemini cassette names; 2.5 Pro
# needs more). The simulator uses Flash's minimum for every model: the lower bound, so a prompt that caches on
# any Gemini model caches here too.
GEMINI_MIN_CACHED_TOKENS = 1024
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


def count_tokens(text: str) -> int:
    """A provider-like estimate: about four characters per token, at least one for non-empty text."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass
class PrefixCache:
    """Prompt-cache entries by prefix hash (the simulator's only state; one per running simulator)."""

    entries: set[str] = field(default_factory=set)

    def seen(self, prefix: str) -> bool:
        return hashlib.sha256(prefix.encode()).hexdigest() in self.entries

    def use(self, prefix: str) -> bool:
        """True when `prefix` was cached before (a read); otherwise it is written now."""
        if self.seen(prefix):
            return True
        self.entries.add(hashlib.sha256(prefix.encode()).hexdigest())
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


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                for key in ("text", "thinking", "content"):
                    if isinstance(part.get(key), (str, list)):
                        parts.append(text_of(part[key]))
        return " ".join(p for p in parts if p)
    return ""


def last_user_text(messages: Sequence[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def instruction_text(system: Any, messages: Sequence[Any]) -> str:
    """The text a model takes instructions from: the system prompt and every system, developer and user turn."""
    turns = [
        text_of(m.get("content"))
        for m in messages
        if isinstance(m, Mapping) and m.get("role") in ("system", "developer", "user")
    ]
    return " ".join(t for t in (text_of(system), *turns) if t)


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


def answers_tool_result(messages: Sequence[Any]) -> bool:
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


def max_tokens_of(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


# --- generating ------------------------------------------------------------------------------------


def value_for_schema(
    schema: Any, rng: random.Random, depth: int = 0, hints: Sequence[str] = (), name: str = ""
) -> Any:
    """A value valid against a (simple) JSON Schema: required properties, enums, types, array bounds. A free
    string takes a name from the conversation when it has one (`hints`), as a model fills in `city` from
    "the weather in Oslo"."""
    if not isinstance(schema, Mapping):
        return "value"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return value_for_schema(schema[key][0], rng, depth + 1, hints, name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = as_object(schema.get("properties"))
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        names = list(dict.fromkeys([*required, *(list(props) if depth < 3 else [])]))
        return {n: value_for_schema(props.get(n, {}), rng, depth + 1, hints, n) for n in names}
    if kind == "array":
        count = max(int(schema.get("minItems", 1)), 1)
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [value_for_schema(schema.get("items", {}), rng, depth + 1, hints, name) for _ in range(count)]
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
    hinted = _hint_for(name, hints)
    if hinted is not None and len(hinted) >= int(schema.get("minLength", 0)):
        return hinted
    text = rng.choice(_WORDS)
    low_len = int(schema.get("minLength", 0))
    return (text * (low_len // len(text) + 1))[: max(low_len, len(text))]


def names_in(prompt: str) -> tuple[str, ...]:
    """Proper names of the prompt (`Oslo`, `Europe/Paris`): capitalised words that do not open a sentence."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+", prompt):
        words = [w.strip(",;:()\"'") for w in sentence.split()]
        alphabetic = [w for w in words if w[:1].isalpha()]
        for word in alphabetic[1:]:
            word = word.rstrip(".?!")
            if re.fullmatch(r"[A-Z][\w-]*(?:/[A-Z][\w-]*)*", word) and word not in found and word != "I":
                found.append(word)
    return tuple(found)


def _hint_for(name: str, hints: Sequence[str]) -> str | None:
    # An area/zone name looks like `Europe/Paris`; any other name is a plain one (`Oslo`).
    zoned = any(part in name.lower() for part in ("zone", "tz"))
    return next((h for h in hints if ("/" in h) == zoned), None)


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
    # Anthropic: the request up to each cache breakpoint, in order; automatic caching (OpenAI-compatible,
    # Gemini): the whole prompt, cached from `auto_min` tokens on.
    cache_prefixes: tuple[str, ...] = ()
    cache_auto: bool = False
    auto_min: int = OPENAI_MIN_CACHED_TOKENS
    instructions: str = ""  # system prompt plus system, developer and user turns (_instruction_text)


def cache_usage(ask: Ask, cache: PrefixCache) -> tuple[int, int]:
    """(tokens read from the cache, tokens written to it) for this request; the cache learns the new prefixes."""
    if ask.cache_auto:
        prompt = ask.cache_prefixes[-1] if ask.cache_prefixes else ""
        size = count_tokens(prompt)
        if size < ask.auto_min:
            return 0, 0
        # The longest step-sized prefix of the prompt seen before is read; every step is remembered.
        steps = range(ask.auto_min, size + 1, OPENAI_CACHE_STEP)
        hits = [n for n in steps if cache.use("auto:" + prompt[: n * 4])]
        return max(hits, default=0), 0
    # Explicit breakpoints (Anthropic): the longest breakpoint prefix cached before is read; the request up to
    # its last breakpoint is written beyond that. A prefix under the minimum is neither read nor written.
    cacheable = [p for p in ask.cache_prefixes if count_tokens(p) >= MIN_CACHEABLE_TOKENS]
    read = max((count_tokens(p) for p in cacheable if cache.seen(p)), default=0)
    for prefix in cacheable:
        cache.use(prefix)
    written = count_tokens(cacheable[-1]) - read if cacheable else 0
    return read, max(written, 0)


def _preamble(calls: Sequence[tuple[str, Any]], rng: random.Random) -> str:
    """The sentence a model writes before calling tools it chose itself (tool_choice auto)."""
    names = " and ".join(name for name, _ in calls)
    opener = rng.choice(("I'll use", "Let me call", "I will check with"))
    return f"{opener} {names} to answer that."


def generate(ask: Ask, rng: random.Random, cache: PrefixCache, id_prefix: str) -> Generated:
    thinking = _THOUGHT if ask.thinking else ""
    thinking_tokens = count_tokens(thinking)
    budget = max(ask.max_tokens - thinking_tokens, 1) if thinking else ask.max_tokens
    cache_read, cache_write = cache_usage(ask, cache)
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
            ToolCall(
                f"{id_prefix}{rng.getrandbits(64):016x}",
                name,
                value_for_schema(schema, rng, hints=names_in(ask.prompt)),
            )
            for name, schema in chosen
        )
        # A forced choice makes the model answer with the call alone (the API prefills the turn for it).
        text = _preamble(chosen, rng) if ask.forced_tool is None else ""
        out_tokens = (
            sum(count_tokens(json.dumps(c.arguments)) for c in calls) + count_tokens(text) + thinking_tokens
        )
        return Generated(
            text,
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


def pieces(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        step = rng.randint(1, 12)
        out.append(text[i : i + step])
        i += step
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
