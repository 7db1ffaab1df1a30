"""OpenAI Chat Completions request → Anthropic Messages request (pure): the field policy, the parameters
(limits, sampling, tool choice, reasoning, response format, metadata) and the assembly; the conversation
itself is converted in `content.py`.

Every refusal and validation error is raised before anything goes upstream. Remote images are not fetched
here: they are reported in `Translated.remote_images` and passed back in as `images`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from reference_gateway.errors import invalid_request, refused
from reference_gateway.policy.models import ModelInfo
from reference_gateway.policy.vocabulary import Profile
from reference_gateway.translate.content import (
    IMAGE_TYPES,
    Block,
    InlineImage,
    RemoteImage,
    Walk,
    messages_to_anthropic,
    parse_data_url,
    refuse_or_drop,
    tools_to_anthropic,
)

__all__ = [
    "IMAGE_TYPES",
    "AnthropicRequest",
    "InlineImage",
    "RemoteImage",
    "RequestOptions",
    "Translated",
    "chat_to_anthropic",
    "parse_data_url",
]

_EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}


class AnthropicRequest(TypedDict, total=False):
    model: str
    max_tokens: int
    system: list[Block]
    messages: list[dict[str, Any]]
    tools: list[Block]
    tool_choice: dict[str, Any]
    stop_sequences: list[str]
    temperature: float
    top_p: float
    thinking: dict[str, Any]
    output_config: dict[str, Any]
    metadata: dict[str, Any]
    stream: bool


@dataclass(frozen=True)
class RequestOptions:
    """What the HTTP layer knows beyond the body: EZAT's `x-ezat-cache` and `x-ezat-session` headers."""

    cache_off: bool = False
    session_header: str | None = None
    # The client's headers that the profile forwards (`AnthropicChannel.forwarded_headers`), lower-case names.
    client_headers: Mapping[str, str] = field(default_factory=dict)
    # An inbound bridge carries the provider's reasoning (its own API's reasoning items): the history's
    # `reasoning_blocks` go back to Anthropic whatever the profile returns to chat clients.
    carry_reasoning: bool = False


@dataclass(frozen=True)
class Translated:
    body: AnthropicRequest
    stream: bool
    include_usage: bool
    # EZAT: prompt_cache_key / x-ezat-session only pick a deployment; with one upstream it selects nothing
    # and is never forwarded in the body.
    session: str | None
    # http(s) images that were not in `images`: the body lacks them until they are fetched and passed in.
    remote_images: tuple[RemoteImage, ...] = field(default=())
    # Extra upstream request headers (LYRouter: `anthropic-beta`).
    headers: Mapping[str, str] = field(default_factory=dict)


def _forwarded(profile: Profile, body: Mapping[str, Any], name: str) -> Any:
    """The field's value when the profile translates it; None when absent or dropped."""
    policy = profile.fields.get(name, profile.unknown_field)
    return body.get(name) if policy.action == "forward" else None


def _check_refused_fields(profile: Profile, body: Mapping[str, Any]) -> None:
    for name, value in body.items():
        policy = profile.fields.get(name, profile.unknown_field)
        if policy.action == "refuse" and not any(
            (value == ok and type(value) is not bool) or value is ok for ok in policy.accepted
        ):
            raise refused(policy.message)


def _tool_choice(
    raw: Any, parallel: Any, tools: Sequence[Block], model: ModelInfo, profile: Profile
) -> tuple[dict[str, Any] | None, bool]:
    """(Anthropic tool_choice, whether it forces a tool call). EZAT: without tools both fields are ignored."""
    if not tools:
        return None, False
    names = {t["name"] for t in tools}
    choice: dict[str, Any] | None
    if raw is None:
        choice = None
    elif raw in ("auto", "none"):
        choice = {"type": raw}
    elif raw == "required":
        choice = {"type": "any"}
    elif isinstance(raw, dict) and raw.get("type") == "function" and isinstance(raw.get("function"), dict):
        name = raw["function"].get("name")
        if name not in names:
            raise invalid_request(f"tool_choice: function {name!r} is not in tools", "tool_choice")
        choice = {"type": "tool", "name": name}
    else:
        raise invalid_request('tool_choice: use "auto", "none", "required" or a function', "tool_choice")
    forced = choice is not None and choice["type"] in ("any", "tool")
    if forced and not model.forced_tool_choice:
        refuse_or_drop(profile.messages.forced_tool_unavailable)
        choice, forced = None, False
    if parallel is False:
        # EZAT: "parallel_tool_calls: false → at most one tool call per turn", without changing the choice.
        choice = choice or {"type": "auto"}
        if choice["type"] != "none":
            choice = {**choice, "disable_parallel_tool_use": True}
    return choice, forced


def _reasoning(raw: Any, model: ModelInfo, profile: Profile, forced: bool) -> tuple[str | None, bool]:
    """(output_config.effort, thinking requested) per the profile's effort table."""
    if raw is None:
        return None, False
    row = profile.reasoning_efforts.get(raw) if isinstance(raw, str) else None
    if row is None:
        refuse_or_drop(profile.messages.unknown_reasoning_effort)
        return None, False
    if row.effort not in model.efforts:
        if row.thinking and profile.messages.effort_unavailable is not None:
            levels = [
                k for k, r in profile.reasoning_efforts.items() if not r.thinking or r.effort in model.efforts
            ]
            raise refused(profile.messages.effort_unavailable.format(value=raw, levels=", ".join(levels)))
        # A model without effort levels: `none`/`minimal` (no thinking) have nothing to send.
        return None, False
    # EZAT: "Thinking isn't requested when tool_choice forces a tool call."
    return row.effort, row.thinking and not forced


def _thinking_switch(enable: Any, budget: Any) -> dict[str, Any] | None:
    """LYRouter "Reasoning parameters" for Anthropic-protocol channels: `enable_thinking: true` without a budget
    → adaptive; `thinking_budget` > 0 → enabled with that budget; `enable_thinking: false` → off (it wins over a
    budget: a reading)."""
    if enable is False:
        return None
    if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
        return {"type": "enabled", "budget_tokens": budget}
    if enable is True:
        return {"type": "adaptive"}
    return None


def _metadata(raw: Any, keys: tuple[str, ...] | None) -> dict[str, Any] | None:
    """LYRouter: "`metadata` keeps only `user_id`"."""
    if keys is None or not isinstance(raw, dict):
        return None
    kept = {k: raw[k] for k in keys if raw.get(k) is not None}
    return kept or None


def _needs_one_hour_beta(value: Any) -> bool:
    """Whether any cache_control in the translated body asks for the 1-hour TTL."""
    if isinstance(value, dict):
        marker = value.get("cache_control")
        if isinstance(marker, dict) and marker.get("ttl") == "1h":
            return True
        return any(_needs_one_hour_beta(v) for v in value.values())
    if isinstance(value, list):
        return any(_needs_one_hour_beta(v) for v in value)
    return False


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid_request(f"{name}: must be a positive integer", name)
    return value


def _number(value: Any, name: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid_request(f"{name}: must be a number", name)
    return value


def _stop(raw: Any) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and all(isinstance(s, str) for s in raw):
        return list(raw)
    raise invalid_request("stop: must be a string or a list of strings", "stop")


def _output_format(raw: Any, profile: Profile) -> dict[str, Any] | None:
    if raw is None:
        return None
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        refuse_or_drop(profile.messages.json_object_format)
        return None
    if kind == "json_schema":
        spec = raw.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise invalid_request(
                "response_format: json_schema.schema must be a JSON schema object", "response_format"
            )
        if profile.messages.open_schema_object is not None:
            open_at = _open_object(schema, "response_format.json_schema.schema")
            if open_at is not None:
                raise invalid_request(
                    profile.messages.open_schema_object.format(path=open_at), "response_format"
                )
        return {"type": "json_schema", "schema": schema}
    raise invalid_request(f"response_format: type {kind!r} is not supported", "response_format")


_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def _open_object(schema: Any, path: str) -> str | None:
    """The path of the first object schema without `"additionalProperties": false`, or None."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema
    if is_object and schema.get("additionalProperties") is not False:
        return path
    for key in _SUBSCHEMA_MAPS:
        children = schema.get(key)
        if isinstance(children, dict):
            for name, child in children.items():
                found = _open_object(child, f"{path}.{key}.{name}")
                if found is not None:
                    return found
    for key in _SUBSCHEMA_LISTS:
        children = schema.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                found = _open_object(child, f"{path}.{key}[{i}]")
                if found is not None:
                    return found
    for key in ("items", "additionalProperties", "not"):
        found = _open_object(schema.get(key), f"{path}.{key}")
        if found is not None:
            return found
    return None


def _with_breakpoint(content: str | list[Block]) -> str | list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content, "cache_control": dict(_EPHEMERAL)}] if content else content
    if not content:
        return content
    return [*content[:-1], {**content[-1], "cache_control": dict(_EPHEMERAL)}]


def _auto_breakpoints(
    system: list[Block], tools: list[Block], turns: list[dict[str, Any]]
) -> tuple[list[Block], list[Block], list[dict[str, Any]]]:
    """EZAT "Prompt caching": one breakpoint after the stable prefix (the system prompt, or the tools when there
    is no system prompt) and one on the newest message."""
    if system:
        system = [*system[:-1], {**system[-1], "cache_control": dict(_EPHEMERAL)}]
    elif tools:
        tools = [*tools[:-1], {**tools[-1], "cache_control": dict(_EPHEMERAL)}]
    last = turns[-1]
    turns = [*turns[:-1], {**last, "content": _with_breakpoint(last["content"])}]
    return system, tools, turns


def chat_to_anthropic(
    body: Mapping[str, Any],
    *,
    profile: Profile,
    model: ModelInfo,
    options: RequestOptions | None = None,
    images: Mapping[str, InlineImage] | None = None,
) -> Translated:
    """Translate one Chat Completions body for `model`; raise `GatewayError` (400) for anything refused."""
    options = options or RequestOptions()
    walk = Walk(options.carry_reasoning)
    _check_refused_fields(profile, body)

    system, turns = messages_to_anthropic(body.get("messages"), model, profile, images or {}, walk)
    tools = tools_to_anthropic(_forwarded(profile, body, "tools"), profile, walk)
    choice, forced = _tool_choice(
        _forwarded(profile, body, "tool_choice"),
        _forwarded(profile, body, "parallel_tool_calls"),
        tools,
        model,
        profile,
    )
    effort, thinking = _reasoning(_forwarded(profile, body, "reasoning_effort"), model, profile, forced)
    output_format = _output_format(_forwarded(profile, body, "response_format"), profile)

    channel = profile.anthropic
    limit, limit_name = None, ""
    for name in channel.limit_fields:
        limit, limit_name = _forwarded(profile, body, name), name
        if limit is not None:
            break
    default_limit = profile.default_max_tokens
    if channel.cap_default_to_model:
        default_limit = min(default_limit, model.max_output_tokens)
    max_tokens = default_limit if limit is None else _positive_int(limit, limit_name)

    stream = _forwarded(profile, body, "stream")
    if stream is not None and not isinstance(stream, bool):
        raise invalid_request("stream: must be a boolean", "stream")
    stream_options = _forwarded(profile, body, "stream_options")
    include_usage = bool(stream) and (
        profile.always_stream_usage
        or (isinstance(stream_options, dict) and stream_options.get("include_usage") is True)
    )

    key = _forwarded(profile, body, "prompt_cache_key")
    if key is not None and (not isinstance(key, str) or len(key) > profile.prompt_cache_key_max):
        raise invalid_request(
            profile.messages.prompt_cache_key_too_long.format(max=profile.prompt_cache_key_max),
            "prompt_cache_key",
        )

    if profile.auto_cache and model.caching and not options.cache_off and not walk.client_breakpoints:
        system, tools, turns = _auto_breakpoints(system, tools, turns)

    out: AnthropicRequest = {"model": model.upstream, "max_tokens": max_tokens}
    if system:
        out["system"] = system
    out["messages"] = turns
    if tools:
        out["tools"] = tools
    if choice is not None:
        out["tool_choice"] = choice
    stop = _stop(_forwarded(profile, body, "stop"))
    if stop:
        out["stop_sequences"] = stop
    # EZAT "Sampling parameters": only for models with capabilities.sampling, only when thinking is off;
    # temperature capped at 1, top_p sent only below 1; otherwise dropped without an error.
    temperature = _forwarded(profile, body, "temperature")
    top_p = _forwarded(profile, body, "top_p")
    if temperature is not None:
        temperature = _number(temperature, "temperature")
    if top_p is not None:
        top_p = _number(top_p, "top_p")
    if not channel.sampling_by_capability:
        # LYRouter: "the gateway does not rescale it"; Relay keeps it in Anthropic's range (its doc is silent).
        if temperature is not None:
            out["temperature"] = min(temperature, 1) if channel.cap_temperature else temperature
        if top_p is not None:
            out["top_p"] = top_p
    elif model.sampling and not thinking:
        if temperature is not None:
            out["temperature"] = min(temperature, 1)
        if top_p is not None and top_p < 1:
            out["top_p"] = top_p
    switch = _thinking_switch(
        _forwarded(profile, body, "enable_thinking"), _forwarded(profile, body, "thinking_budget")
    )
    if thinking:
        out["thinking"] = {"type": "adaptive"}
    elif switch is not None:
        out["thinking"] = switch
    metadata = _metadata(_forwarded(profile, body, "metadata"), channel.metadata_keys)
    if metadata is not None:
        out["metadata"] = metadata
    output_config: dict[str, Any] = {}
    if effort is not None:
        output_config["effort"] = effort
    if output_format is not None:
        output_config["format"] = output_format
    if output_config:
        out["output_config"] = output_config
    if stream:
        out["stream"] = True
    session = options.session_header or (key if isinstance(key, str) else None)
    headers = {k: v for k, v in options.client_headers.items() if k in channel.forwarded_headers}
    if channel.one_hour_cache_beta is not None and _needs_one_hour_beta(out):
        # LYRouter: "sets the anthropic-beta request header ... (overriding any value the client sent)".
        headers["anthropic-beta"] = channel.one_hour_cache_beta
    return Translated(out, bool(stream), include_usage, session, tuple(walk.remote), headers)
