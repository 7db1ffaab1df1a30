"""What a real provider refuses: the replay upstream validates each request like the API it plays, so a
gateway that sends something the provider would reject fails, instead of being served a cassette.

Pure: `refusal(kind, body)` returns the provider's complaint, or None when the request would be accepted.
Only constraints the providers document and enforce are checked (wire-reference.md; Anthropic's Messages
API reference: extended thinking, prompt caching, vision, tool use); anything unsure is left alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from typing import Any

MAX_CACHE_BREAKPOINTS = 4  # Anthropic: "up to 4 cache breakpoints"
MIN_THINKING_BUDGET = 1024  # Anthropic: budget_tokens >= 1024 and < max_tokens

# Magic bytes of the image types Anthropic accepts (base64 sources must decode to what they declare).
_MAGIC: Mapping[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
    "application/pdf": (b"%PDF",),
}


# Parameters the providers type as integers: a JSON number with a fraction or an exponent (`1.0`,
# `1.2345678901235e+18`) is refused even when its value is whole (OpenAI: "expected an integer, but got a
# decimal number instead"). The parsed body tells them apart: json.loads gives a float for those.
OPENAI_INTEGERS = ("seed", "n", "max_tokens", "max_completion_tokens", "top_logprobs")
ANTHROPIC_INTEGERS = ("max_tokens", "top_k")


class Problem(str):
    """A refusal's message, with the `param` and `code` the provider puts beside it (OpenAI's envelope)."""

    param: str | None = None
    code: str | None = None

    @classmethod
    def of(cls, message: str, param: str | None = None, code: str | None = None) -> Problem:
        problem = cls(message)
        problem.param, problem.code = param, code
        return problem


def _decimal(value: Any) -> bool:
    return isinstance(value, float)


def openai_integer_problems(body: Mapping[str, Any]) -> Iterator[str]:
    for name in OPENAI_INTEGERS:
        if _decimal(body.get(name)):
            yield Problem.of(
                f"Invalid type for '{name}': expected an integer, but got a decimal number instead.",
                param=name,
                code="invalid_type",
            )


def anthropic_integer_problems(body: Mapping[str, Any]) -> Iterator[str]:
    thinking = body.get("thinking")
    values = {name: body.get(name) for name in ANTHROPIC_INTEGERS}
    if isinstance(thinking, Mapping):
        values["thinking.budget_tokens"] = thinking.get("budget_tokens")
    for name, value in values.items():
        if _decimal(value):
            yield f"{name}: Input should be a valid integer"


def refusal(kind: str | None, body: Any, headers: Mapping[str, str] | None = None) -> str | None:
    """The first thing the provider behind `kind` would refuse in this request (body, and the headers that
    change what the body may hold: Anthropic's `anthropic-version` and `anthropic-beta`), or None."""
    if not isinstance(body, Mapping):
        return None  # the body schema checks and the gateway's own framing are judged elsewhere
    if kind == "anthropic.messages":
        return next(anthropic_problems(body, headers or {}), None)
    if kind == "anthropic.count_tokens":
        return next(anthropic_count_problems(body), None)
    if kind == "openai.chat":
        return next(openai_problems(body), None)
    if kind == "gemini.generate":
        return next(gemini_problems(body), None)
    if kind == "openai.responses":
        return next(responses_problems(body), None)
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _range(body: Mapping[str, Any], name: str, low: float, high: float) -> Iterator[str]:
    value = body.get(name)
    if value is not None and (not _number(value) or not low <= value <= high):
        yield f"{name}: {value!r} is outside [{low:g}, {high:g}]"


def anthropic_count_problems(body: Mapping[str, Any]) -> Iterator[str]:
    """POST /v1/messages/count_tokens: a Messages body without `max_tokens` (Anthropic API reference, Count
    tokens: model, messages, and optionally system, tools, thinking, tool_choice)."""
    if not isinstance(body.get("model"), str) or not body.get("model"):
        yield "model: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        yield "messages: Field required (at least one message)"


# Top-level fields of a Messages request: anthropic 2.16.0's MessageCreateParams, its beta twin and `stream`,
# plus the sampling fields an older `anthropic-version` takes. Anthropic refuses any other key with
# "<key>: Extra inputs are not permitted" (its request model forbids extras; audit D9: an OpenAI field leaking
# through, `n`, `user`, `stream_options`, `response_format`, passed every rule that did not name it).
ANTHROPIC_FIELDS = frozenset(
    {
        "model", "messages", "max_tokens", "stream", "system", "metadata", "stop_sequences", "tools",
        "tool_choice", "thinking", "output_config", "cache_control", "service_tier", "speed", "inference_geo",
        "container", "diagnostics", "context_management", "mcp_servers", "temperature", "top_p",
        "top_k",
    }
)  # fmt: skip
# The deprecated beta spelling of structured outputs: accepted with its beta header during the transition
# (Anthropic's structured-outputs guide: `output_format` moved to `output_config.format`).
BETA_FIELDS = {"output_format": "structured-outputs-", "context_management": "context-management-"}
# `anthropic-version: 2026-10-21` (the SDKs' default since 2.0) removed temperature, top_p and top_k: the API
# answers 400 "temperature: Extra inputs are not permitted" even at default values (docs/wire-reference.md 1.1;
# the migration reports it cites). Versions before it accept them.
SAMPLING_REMOVED_IN = "2026-10-21"
SAMPLING_FIELDS = ("temperature", "top_p", "top_k")


def _anthropic_field_problems(body: Mapping[str, Any], headers: Mapping[str, str]) -> Iterator[str]:
    lowered = {k.lower(): v for k, v in headers.items()}
    betas = lowered.get("anthropic-beta", "")
    version = lowered.get("anthropic-version", "")
    for key in body:
        if key in ANTHROPIC_FIELDS:
            if key in SAMPLING_FIELDS and version >= SAMPLING_REMOVED_IN:
                yield f"{key}: Extra inputs are not permitted (anthropic-version {version} has no {key})"
            continue
        beta = BETA_FIELDS.get(key)
        if beta is not None and beta in betas:
            continue
        yield f"{key}: Extra inputs are not permitted"


def anthropic_problems(body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Iterator[str]:
    yield from _anthropic_field_problems(body, headers or {})
    yield from anthropic_integer_problems(body)
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        yield f"max_tokens: required, a positive integer (got {max_tokens!r})"
        return
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        yield "messages: at least one message is required"
        return
    yield from _range(body, "temperature", 0, 1)
    yield from _range(body, "top_p", 0, 1)
    yield from _thinking_problems(body, max_tokens)
    yield from _cache_problems(body)
    yield from _tool_problems(body, messages)
    yield from _thinking_history_problems(body, messages)
    for i, block in _blocks(messages):
        yield from _source_problems(i, block)


def _thinking_problems(body: Mapping[str, Any], max_tokens: int) -> Iterator[str]:
    thinking = body.get("thinking")
    if not isinstance(thinking, Mapping) or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
        yield f"thinking.budget_tokens: must be at least {MIN_THINKING_BUDGET} (got {budget!r})"
    elif budget >= max_tokens:
        yield f"thinking.budget_tokens: {budget} must be less than max_tokens ({max_tokens})"
    if body.get("temperature") not in (None, 1):
        yield "temperature: may only be set to 1 when thinking is enabled"
    if body.get("top_k") is not None:
        yield "top_k: cannot be set when thinking is enabled"
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") in ("any", "tool"):
        yield "tool_choice: thinking may not be enabled when tool_choice forces tool use"


def _thinking_history_problems(body: Mapping[str, Any], messages: list[Any]) -> Iterator[str]:
    """With thinking on, the last assistant turn that calls a tool must begin with the thinking block the model
    wrote before the call (Anthropic refuses it otherwise, in these words; extended thinking guide, "Preserving
    thinking blocks"): a gateway that drops thinking from a tool turn's history meets this live."""
    thinking = body.get("thinking")
    if not isinstance(thinking, Mapping) or thinking.get("type") not in ("enabled", "adaptive"):
        return
    turns = [
        (i, m) for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "assistant"
    ]
    if not turns:
        return
    i, last = turns[-1]
    content = _content(last)
    if not any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in content):
        return
    first = content[0] if content and isinstance(content[0], Mapping) else {}
    if first.get("type") not in ("thinking", "redacted_thinking"):
        yield (
            f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must start with a "
            "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
            "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`."
        )


def _cache_marks(value: Any) -> Iterator[None]:
    if isinstance(value, Mapping):
        if isinstance(value.get("cache_control"), Mapping):
            yield None
        for v in value.values():
            yield from _cache_marks(v)
    elif isinstance(value, list):
        for v in value:
            yield from _cache_marks(v)


def _cache_problems(body: Mapping[str, Any]) -> Iterator[str]:
    # Only where Anthropic reads breakpoints: tools, system, message blocks (not inside tool schemas).
    tools = [
        {k: v for k, v in t.items() if k != "input_schema"}
        for t in body.get("tools") or []
        if isinstance(t, Mapping)
    ]
    count = sum(1 for _ in _cache_marks([tools, body.get("system"), body.get("messages")]))
    if count > MAX_CACHE_BREAKPOINTS:
        yield f"cache_control: {count} blocks have it; at most {MAX_CACHE_BREAKPOINTS} cache breakpoints are allowed"


def _content(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, list) else []


def _blocks(messages: list[Any]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for i, message in enumerate(messages):
        for block in _content(message):
            if isinstance(block, Mapping):
                yield i, block


def _tool_use_ids(message: Any) -> list[Any]:
    return [b.get("id") for b in _content(message) if isinstance(b, Mapping) and b.get("type") == "tool_use"]


def _tool_problems(body: Mapping[str, Any], messages: list[Any]) -> Iterator[str]:
    for tool in body.get("tools") or []:
        if not isinstance(tool, Mapping) or "input_schema" not in tool:
            continue  # server tools (web_search_*) have no input_schema
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            yield f"tools: {tool.get('name')!r}: input_schema.type must be 'object'"
    for i, message in enumerate(messages):
        asked = _tool_use_ids(messages[i - 1]) if i else []
        results = [b for b in _content(message) if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        for block in results:
            if block.get("tool_use_id") not in asked:
                yield (
                    f"messages.{i}: tool_result {block.get('tool_use_id')!r} has no corresponding tool_use "
                    "block in the previous message"
                )
        ids = _tool_use_ids(message)
        if ids and i + 1 < len(messages):
            answered = {
                b.get("tool_use_id")
                for b in _content(messages[i + 1])
                if isinstance(b, Mapping) and b.get("type") == "tool_result"
            }
            missing = [x for x in ids if x not in answered]
            if missing:
                yield f"messages.{i}: tool_use ids {missing} were found without tool_result blocks immediately after"


def _source_problems(i: int, block: Mapping[str, Any]) -> Iterator[str]:
    source = block.get("source")
    if block.get("type") not in ("image", "document") or not isinstance(source, Mapping):
        return
    if source.get("type") != "base64":
        return
    media = source.get("media_type")
    if media not in _MAGIC or (block.get("type") == "image") == (media == "application/pdf"):
        yield f"messages.{i}: {block.get('type')} source media_type {media!r} is not supported"
        return
    try:
        data = base64.b64decode(str(source.get("data") or ""), validate=True)
    except (binascii.Error, ValueError):
        yield f"messages.{i}: {block.get('type')} source data is not valid base64"
        return
    if not data.startswith(_MAGIC[str(media)]):
        yield f"messages.{i}: {block.get('type')} source data does not decode to {media}"


# OpenAI's reasoning models (the o-series, gpt-5 and later): what api.openai.com refuses on chat completions
# for them (openai-python's completion_create_params: max_tokens "is not compatible with o-series models";
# temperature and top_p take only their default 1; logprobs is not offered).
REASONING_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)")


def reasoning_problems(body: Mapping[str, Any]) -> Iterator[str]:
    model = body.get("model")
    if not isinstance(model, str) or not REASONING_MODEL.match(model):
        return
    if "max_tokens" in body and body["max_tokens"] is not None:
        yield Problem.of(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
            "instead.", "max_tokens", "unsupported_parameter")  # fmt: skip
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and value != 1:
            yield Problem.of(
                f"Unsupported value: '{name}' does not support {value} with this model. Only the default (1) "
                "value is supported.", name, "unsupported_value")  # fmt: skip
    if body.get("logprobs") is True:
        yield Problem.of("Unsupported parameter: 'logprobs' is not supported with this model.", "logprobs",
                         "unsupported_parameter")  # fmt: skip


# api.openai.com's chat completions parameters (openai-python 3.57.0 `CompletionCreateParamsBase`, and `stream`). It
# refuses any other for its own models ("Unrecognized request argument supplied: x"), so a gateway that puts another
# API's word on the wire (Claude Code Router's `reasoning`, claude-code-router#724) fails as it would live; a model
# of another OpenAI-compatible provider (deepseek-chat, a local server) may take more, so only OpenAI's ids are held.
OPENAI_CHAT_PARAMETERS = frozenset({
    "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs", "max_completion_tokens",
    "max_tokens", "messages", "metadata", "modalities", "model", "moderation", "n", "parallel_tool_calls",
    "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
    "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store", "stream",
    "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity",
    "web_search_options",
})  # fmt: skip
OPENAI_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:gpt-|o\d|chatgpt-|ft:)")
# tool_choice's string values (Create chat completion, tool_choice); an object names a function.
OPENAI_TOOL_CHOICES = ("none", "auto", "required")


def _parameter_problems(body: Mapping[str, Any]) -> Iterator[str]:
    if OPENAI_MODEL.match(str(body.get("model") or "")):
        for name in body:
            if name not in OPENAI_CHAT_PARAMETERS:
                yield Problem.of(f"Unrecognized request argument supplied: {name}")
                return
    choice = body.get("tool_choice")
    if isinstance(choice, str) and choice not in OPENAI_TOOL_CHOICES:
        yield Problem.of(
            f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'.",
            param="tool_choice", code="invalid_value",
        )  # fmt: skip


def strict_schema_problems(schema: Any, name: str, where: str = "()") -> Iterator[str]:
    """What OpenAI's strict structured outputs refuse in a schema (Structured Outputs guide, "Supported schemas":
    every property required, `additionalProperties: false` on every object), in its own words."""
    if not isinstance(schema, Mapping):
        return
    properties = schema.get("properties")
    if schema.get("type") == "object" or isinstance(properties, Mapping):
        props = properties if isinstance(properties, Mapping) else {}
        if schema.get("additionalProperties") is not False:
            yield (f"Invalid schema for response_format '{name}': In context={where}, 'additionalProperties' is "
                   "required to be supplied and to be false.")  # fmt: skip
        given = schema.get("required")
        required: list[Any] = given if isinstance(given, list) else []
        missing = [key for key in props if key not in required]
        if missing:
            yield (f"Invalid schema for response_format '{name}': In context={where}, 'required' is required to be "
                   f"supplied and to be an array including every key in properties. Missing '{missing[0]}'.")  # fmt: skip
        for key, sub in props.items():
            yield from strict_schema_problems(sub, name, f"('properties', '{key}')")
    if isinstance(schema.get("items"), Mapping):
        yield from strict_schema_problems(schema["items"], name, f"{where}, 'items'")


def _response_format_problems(body: Mapping[str, Any]) -> Iterator[str]:
    fmt = body.get("response_format")
    if not isinstance(fmt, Mapping) or fmt.get("type") != "json_schema":
        return
    given = fmt.get("json_schema")
    spec: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    if spec.get("strict") is True:
        for problem in strict_schema_problems(spec.get("schema"), str(spec.get("name") or "")):
            yield Problem.of(problem, param="response_format", code="invalid_json_schema")
            return


def openai_problems(body: Mapping[str, Any]) -> Iterator[str]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        yield "messages: at least one message is required"
        return
    yield from openai_integer_problems(body)
    yield from _parameter_problems(body)
    yield from _response_format_problems(body)
    yield from reasoning_problems(body)
    yield from _range(body, "temperature", 0, 2)
    yield from _range(body, "top_p", 0, 1)
    yield from _range(body, "presence_penalty", -2, 2)
    yield from _range(body, "frequency_penalty", -2, 2)
    n = body.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        yield f"n: {n!r} must be a positive integer"
    if body.get("stream_options") is not None and body.get("stream") is not True:
        # api.openai.com's own words (BerriAI/litellm#5803, lobehub/lobehub#6735)
        yield Problem.of(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param="stream_options"
        )


def gemini_problems(body: Mapping[str, Any]) -> Iterator[str]:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        yield "contents: at least one content is required"
        return
    config = body.get("generationConfig")
    if isinstance(config, Mapping):
        yield from _range(config, "temperature", 0, 2)
        yield from _range(config, "topP", 0, 1)


# OpenAI's Responses API as a provider (create a model response). api.openai.com refuses a parameter it does not
# take ("Unknown parameter: 'x'.", code unknown_parameter); the replay refuses the Chat Completions words that have
# another name or no place on /v1/responses (`max_tokens` → `max_output_tokens`, `response_format` → `text.format`,
# `messages` → `input`, …), so a gateway that sends a chat body there fails as it would live. Other names are left
# alone: real clients send fields openai-python does not type (Codex sends `client_metadata`), and the replay must
# not refuse what the provider takes.
CHAT_ONLY_PARAMETERS = frozenset({
    "messages", "max_tokens", "max_completion_tokens", "response_format", "stop", "n", "functions",
    "function_call", "logprobs", "frequency_penalty", "presence_penalty", "seed", "logit_bias", "reasoning_effort",
    "modalities", "audio", "prediction", "web_search_options", "verbosity",
})  # fmt: skip
MIN_OUTPUT_TOKENS = 16  # "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16"


def _responses_input_problems(body: Mapping[str, Any]) -> Iterator[str]:
    """What api.openai.com refuses in a history a gateway reshaped (audit D9): an empty `input`; a function call
    without its output, or an output without its call (unless `previous_response_id` holds the other half:
    openai/codex#593 quotes the first); a reasoning item without the output item it led to. Item ids of a `store: false` response (jrkropp/open-webui-developer-toolkit#715)
    are not refused here: which items OpenAI takes back by id is not documented, and clients send them."""
    items = body.get("input")
    if isinstance(items, list) and not items and not body.get("previous_response_id"):
        yield Problem.of("Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty "
                         "array instead.", "input", "empty_array")  # fmt: skip
        return
    if not isinstance(items, list) or body.get("previous_response_id"):
        return
    entries = [i for i in items if isinstance(i, Mapping)]
    for kind, answer in (
        ("function_call", "function_call_output"),
        ("custom_tool_call", "custom_tool_call_output"),
    ):
        calls = {i.get("call_id") for i in entries if i.get("type") == kind}
        outputs = {i.get("call_id") for i in entries if i.get("type") == answer}
        for call_id in sorted(str(c) for c in calls - outputs):
            yield Problem.of(f"No tool output found for function call {call_id}.", "input")
            return
        for call_id in sorted(str(c) for c in outputs - calls):
            yield Problem.of(f"No tool call found for function call output with call_id {call_id}.", "input")
            return
    # A reasoning item comes back with the output item it led to (a message of the assistant, a call): one that ends
    # the input, or is followed by a new input (a user turn, a call's output), is refused (continuedev/continue#8933,
    # openai/openai-node#1567, mastra-ai/mastra#14048 quote it). Which follower OpenAI pairs with it by id is not
    # documented, so any output item is taken.
    for index, item in enumerate(entries):
        if item.get("type") != "reasoning":
            continue
        follower = entries[index + 1] if index + 1 < len(entries) else None
        if follower is None or not _output_item(follower):
            yield Problem.of(f"Item '{item.get('id')}' of type 'reasoning' was provided without its required "
                             "following item.", "input")  # fmt: skip
            return


def _output_item(item: Mapping[str, Any]) -> bool:
    """An item a model's answer holds (what may follow its reasoning): not an input message of the user, system or
    developer, and not a tool's output."""
    kind = item.get("type") or "message"
    if kind == "message":
        return item.get("role") == "assistant"
    return not kind.endswith("_output")


def responses_problems(body: Mapping[str, Any]) -> Iterator[str]:
    for name in body:
        if name in CHAT_ONLY_PARAMETERS:
            yield Problem.of(f"Unknown parameter: '{name}'.", name, "unknown_parameter")
            return
    if not isinstance(body.get("model"), str) or not body["model"]:
        yield Problem.of("Missing required parameter: 'model'.", "model", "missing_required_parameter")
        return
    for name in ("max_output_tokens", "top_logprobs", "max_tool_calls"):
        value = body.get(name)
        if isinstance(value, float):
            yield Problem.of(
                f"Invalid type for '{name}': expected an integer, but got a decimal number instead.",
                name, "invalid_type")  # fmt: skip
    limit = body.get("max_output_tokens")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit < MIN_OUTPUT_TOKENS:
        yield Problem.of(
            f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= {MIN_OUTPUT_TOKENS}, "
            f"but got {limit} instead.", "max_output_tokens", "integer_below_min_value")  # fmt: skip
    model = body["model"]
    if REASONING_MODEL.match(model):
        # Reasoning models take no sampling parameters on the Responses API either.
        for name in ("temperature", "top_p"):
            if body.get(name) is not None and body.get(name) != 1:
                yield Problem.of(
                    f"Unsupported parameter: '{name}' is not supported with this model.", name,
                    "unsupported_parameter")  # fmt: skip
    yield from _range(body, "temperature", 0, 2)
    yield from _range(body, "top_p", 0, 1)
    yield from _responses_input_problems(body)
    given_text = body.get("text")
    text: Mapping[str, Any] = given_text if isinstance(given_text, Mapping) else {}
    given_format = text.get("format")
    fmt: Mapping[str, Any] = given_format if isinstance(given_format, Mapping) else {}
    if fmt.get("type") == "json_schema" and fmt.get("strict") is True:
        for problem in strict_schema_problems(fmt.get("schema"), str(fmt.get("name") or "")):
            yield Problem.of(
                problem.replace("response_format", "text.format"), "text.format.schema", "invalid_json_schema"
            )
            break
    if body.get("stream_options") is not None and body.get("stream") is not True:
        yield Problem.of(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.", param="stream_options"
        )
