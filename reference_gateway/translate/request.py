"""OpenAI Chat Completions request → Anthropic Messages request (pure).

Every refusal and validation error is raised here, before anything goes upstream. Remote images are not
fetched here: they are reported in `Translated.remote_images` and passed back in as `images`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from reference_gateway.errors import echo, invalid_request, refused
from reference_gateway.models import ModelInfo
from reference_gateway.profiles import Profile

Block = dict[str, Any]
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
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


@dataclass(frozen=True)
class InlineImage:
    media_type: str
    data: str  # base64, no `data:` prefix


@dataclass(frozen=True)
class RemoteImage:
    path: str  # e.g. messages[0].content[2].image_url.url, for error messages
    url: str


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


def parse_data_url(url: str, *, validate: bool = True) -> tuple[str, str] | None:
    """`data:<type>;base64,<data>` → (type, data) when it is well-formed (and, with `validate`, decodable
    base64), else None."""
    if url[:5].lower() != "data:":
        return None
    header, comma, data = url[5:].partition(",")
    params = header.split(";")
    if not comma or not data or "base64" not in (p.strip().lower() for p in params[1:]):
        return None
    if validate:
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return None
    return params[0].strip().lower(), data


class _Walk:
    """Per-call scratch state of one translation (never shared, never global)."""

    def __init__(self) -> None:
        self.client_breakpoints = False
        self.remote: list[RemoteImage] = []

    def note_cache_control(self, part: Mapping[str, Any], block: Block) -> Block:
        if part.get("cache_control") is not None:
            self.client_breakpoints = True
            return {**block, "cache_control": part["cache_control"]}
        return block


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


def _refuse_or_drop(template: str | None, **values: str) -> None:
    """Raise the profile's refusal for a nested part; return (to drop the part) when the profile drops it."""
    if template is not None:
        raise refused(template.format(**values))


def _text_parts(content: Any, path: str, what: str) -> list[tuple[str, Any]]:
    """(text, cache_control) pairs of a text-only content: a string or a list of text parts."""
    if isinstance(content, str):
        return [(content, None)]
    if not isinstance(content, list):
        raise invalid_request(f"{path}: must be a string or a list of text parts", path)
    out: list[tuple[str, Any]] = []
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise invalid_request(f"{path}[{j}]: {what} accept only text parts", f"{path}[{j}]")
        out.append((part["text"], part.get("cache_control")))
    return out


def _system_blocks(texts: Sequence[tuple[str, Any]]) -> list[Block]:
    """EZAT: system and developer messages are "joined into one system prompt": consecutive texts are joined
    with a blank line into one block; a client's `cache_control` ends a block so its breakpoint stays put."""
    blocks: list[Block] = []
    pending: list[str] = []
    for text, cache_control in texts:
        pending.append(text)
        if cache_control is not None:
            blocks.append({"type": "text", "text": "\n\n".join(pending), "cache_control": cache_control})
            pending = []
    if pending:
        blocks.append({"type": "text", "text": "\n\n".join(pending)})
    return [b for b in blocks if b["text"] or "cache_control" in b]


def _image_block(
    part: Mapping[str, Any],
    path: str,
    model: ModelInfo,
    profile: Profile,
    images: Mapping[str, InlineImage],
    walk: _Walk,
) -> Block | None:
    if not model.vision:
        raise profile.requests.images_unsupported.error(path=path)
    image_url = part.get("image_url")
    url = image_url.get("url") if isinstance(image_url, dict) else image_url
    url_path = f"{path}.image_url.url"
    if not isinstance(url, str) or not url:
        raise invalid_request(f"{url_path}: is required", url_path)
    scheme = url.split(":", 1)[0].lower()
    checked = profile.anthropic.check_image_data
    if scheme == "data":
        parsed = parse_data_url(url, validate=checked)
        if parsed is None or (checked and parsed[0] not in IMAGE_TYPES):
            raise invalid_request(
                f"{url_path}: must be a base64 data URL (data:<type>;base64,<data>) of type "
                "image/jpeg, image/png, image/gif or image/webp",
                url_path,
            )
        source = {"type": "base64", "media_type": parsed[0], "data": parsed[1]}
    elif scheme in ("http", "https") and profile.anthropic.image_url_source:
        source = {"type": "url", "url": url}
    elif scheme in ("http", "https"):
        fetched = images.get(url_path)
        if fetched is None:
            walk.remote.append(RemoteImage(url_path, url))
            return None
        source = {"type": "base64", "media_type": fetched.media_type, "data": fetched.data}
    else:
        raise invalid_request(f"{url_path}: must be a data URL or an http(s) URL", url_path)
    # EZAT: "`detail` is ignored".
    block: Block = {"type": "image", "source": source}
    # LYRouter keeps markers only "on text content blocks and tool definitions".
    return walk.note_cache_control(part, block) if profile.anthropic.cache_control_on_images else block


def _file_block(part: Mapping[str, Any], path: str, profile: Profile, walk: _Walk) -> Block | None:
    if not profile.anthropic.convert_files:
        return None  # LYRouter: "Anthropic-protocol channels convert only text blocks and image blocks"
    file = part.get("file")
    file_path = f"{path}.file"
    if not isinstance(file, dict):
        raise invalid_request(f"{file_path}: must be an object", file_path)
    data_url = file.get("file_data")
    if data_url is None and file.get("file_id") is not None:
        _refuse_or_drop(profile.messages.file_id_part, path=file_path)
        return None
    parsed = parse_data_url(data_url) if isinstance(data_url, str) else None
    if parsed is None or parsed[0] != "application/pdf":
        raise invalid_request(
            f"{file_path}.file_data: must be a base64 data URL of type application/pdf",
            f"{file_path}.file_data",
        )
    source = {"type": "base64", "media_type": "application/pdf", "data": parsed[1]}
    return walk.note_cache_control(part, {"type": "document", "source": source})


def _user_content(
    content: Any,
    path: str,
    model: ModelInfo,
    profile: Profile,
    images: Mapping[str, InlineImage],
    walk: _Walk,
) -> str | list[Block]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise invalid_request(f"{path}: must be a string or a list of parts", path)
    blocks: list[Block] = []
    for j, part in enumerate(content):
        part_path = f"{path}[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        block: Block | None
        if not isinstance(part, dict):
            raise invalid_request(f"{part_path}: must be an object", part_path)
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise invalid_request(f"{part_path}.text: must be a string", f"{part_path}.text")
            block = walk.note_cache_control(part, {"type": "text", "text": part["text"]})
        elif kind == "image_url":
            block = _image_block(part, part_path, model, profile, images, walk)
        elif kind == "file":
            block = _file_block(part, part_path, profile, walk)
        elif kind == "input_audio":
            _refuse_or_drop(profile.messages.input_audio_part, path=part_path)
            block = None
        elif profile.anthropic.drop_unknown_parts:
            block = None
        else:
            raise invalid_request(
                f"{part_path}.type: unsupported content part type {echo(repr(kind))}", f"{part_path}.type"
            )
        if block is not None:
            blocks.append(block)
    return blocks


def _reasoning_blocks(message: Mapping[str, Any], profile: Profile) -> list[Block]:
    """LYRouter: an assistant message put back with its `reasoning_blocks` hands the signed thinking blocks back
    to the upstream, unchanged and first (Anthropic wants them before the text and tool calls)."""
    raw = message.get("reasoning_blocks") if profile.anthropic.reasoning_output else None
    if not isinstance(raw, list):
        return []
    return [
        dict(b) for b in raw if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
    ]


def _assistant_content(message: Mapping[str, Any], path: str, profile: Profile, walk: _Walk) -> list[Block]:
    blocks: list[Block] = _reasoning_blocks(message, profile)
    content = message.get("content")
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "refusal":
                continue  # EZAT: "`refusal` parts are dropped".
            if kind != "text" and profile.anthropic.drop_unknown_parts:
                continue
            if kind != "text" or not isinstance(part.get("text"), str):
                raise invalid_request(
                    f"{path}.content[{j}]: assistant messages accept text and refusal parts",
                    f"{path}.content[{j}]",
                )
            if part["text"] or part.get("cache_control") is not None:
                blocks.append(walk.note_cache_control(part, {"type": "text", "text": part["text"]}))
    elif content is not None:
        raise invalid_request(f"{path}.content: must be a string, a list of parts or null", f"{path}.content")
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        return blocks
    if not isinstance(tool_calls, list):
        raise invalid_request(f"{path}.tool_calls: must be a list", f"{path}.tool_calls")
    for k, call in enumerate(tool_calls):
        call_path = f"{path}.tool_calls[{k}]"
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("id"), str)
            or not isinstance(function, dict)
        ):
            raise invalid_request(f"{call_path}: needs an id and a function", call_path)
        if not isinstance(function.get("name"), str):
            raise invalid_request(
                f"{call_path}.function.name: must be a string", f"{call_path}.function.name"
            )
        arguments = function.get("arguments") or "{}"
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise invalid_request(
                f"{call_path}.function.arguments: must be a JSON object", f"{call_path}.function.arguments"
            )
        blocks.append({"type": "tool_use", "id": call["id"], "name": function["name"], "input": parsed})
    return blocks


def _tool_result(message: Mapping[str, Any], path: str, walk: _Walk) -> Block:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise invalid_request(f"{path}.tool_call_id: is required", f"{path}.tool_call_id")
    content = message.get("content")
    result: str | list[Block]
    if content is None or isinstance(content, str):
        result = content or ""
    else:
        pairs = _text_parts(content, f"{path}.content", "tool messages")
        parts = content if isinstance(content, list) else []
        result = [
            walk.note_cache_control(part, {"type": "text", "text": text})
            for (text, _), part in zip(pairs, parts, strict=True)
        ]
    return {"type": "tool_result", "tool_use_id": call_id, "content": result}


def _messages(
    raw: Any, model: ModelInfo, profile: Profile, images: Mapping[str, InlineImage], walk: _Walk
) -> tuple[list[Block], list[dict[str, Any]]]:
    if not isinstance(raw, list):
        raise invalid_request("messages: must be a list", "messages")
    # An empty list has no message that isn't `system` or `developer`: the no-user-message refusal below.
    system_texts: list[tuple[str, Any]] = []
    turns: list[dict[str, Any]] = []
    tool_turn: list[Block] | None = None  # the user turn collecting consecutive tool results
    for i, message in enumerate(raw):
        path = f"messages[{i}]"
        if not isinstance(message, dict):
            raise invalid_request(f"{path}: must be an object", path)
        role = message.get("role")
        if role != "tool":
            tool_turn = None
        if role in ("system", "developer"):
            # EZAT: "Joined into one system prompt, wherever they appear in `messages`. Text only."
            pairs = _text_parts(message.get("content"), f"{path}.content", "system and developer messages")
            walk.client_breakpoints |= any(cc is not None for _, cc in pairs)
            system_texts.extend(pairs)
        elif role == "user":
            content = _user_content(message.get("content"), f"{path}.content", model, profile, images, walk)
            turns.append({"role": "user", "content": content})
        elif role == "assistant":
            blocks = _assistant_content(message, path, profile, walk)
            if blocks:
                turns.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            # EZAT: "Results that follow one assistant turn are sent together": one user turn of tool_results.
            result = _tool_result(message, path, walk)
            if tool_turn is None:
                tool_turn = [result]
                turns.append({"role": "user", "content": tool_turn})
            else:
                tool_turn.append(result)
        elif role == "function":
            _refuse_or_drop(profile.messages.function_role, path=f"{path}.role")
        elif role is None:
            raise invalid_request(f"{path}.role: is required", f"{path}.role")
        else:
            raise invalid_request(f"{path}.role: unknown role {echo(repr(role))}", f"{path}.role")
    if not turns:
        raise invalid_request(profile.messages.no_user_message, "messages")
    return _system_blocks(system_texts), turns


def _tools(raw: Any, profile: Profile, walk: _Walk) -> list[Block]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise invalid_request("tools: must be a list", "tools")
    tools: list[Block] = []
    for i, tool in enumerate(raw):
        path = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise invalid_request(f"{path}: must be an object", path)
        if tool.get("type") != "function":
            _refuse_or_drop(profile.messages.non_function_tool, path=f"{path}.type")
            continue
        function = tool.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise invalid_request(f"{path}.function.name: is required", f"{path}.function.name")
        schema = function.get("parameters")
        out: Block = {
            "name": function["name"],
            "input_schema": schema if isinstance(schema, dict) else {"type": "object", "properties": {}},
        }
        if isinstance(function.get("description"), str):
            out["description"] = function["description"]
        if isinstance(function.get("strict"), bool):
            out["strict"] = function["strict"]
        # EZAT: a client's breakpoint "on a tool, as OpenRouter does" (on the tool or on its function).
        cache_control = tool.get("cache_control", function.get("cache_control"))
        if cache_control is not None:
            walk.client_breakpoints = True
            out["cache_control"] = cache_control
        tools.append(out)
    return tools


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
        _refuse_or_drop(profile.messages.forced_tool_unavailable)
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
        _refuse_or_drop(profile.messages.unknown_reasoning_effort)
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
        _refuse_or_drop(profile.messages.json_object_format)
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
    walk = _Walk()
    _check_refused_fields(profile, body)

    system, turns = _messages(body.get("messages"), model, profile, images or {}, walk)
    tools = _tools(_forwarded(profile, body, "tools"), profile, walk)
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
        # LYRouter: "the gateway does not rescale it".
        if temperature is not None:
            out["temperature"] = temperature
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
