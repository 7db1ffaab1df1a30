"""The conversation of a Chat Completions request as Anthropic blocks (pure): messages → system blocks and
turns, content parts (text, images, PDF files), tool calls and results, and the tool definitions.

Every refusal of a nested part is raised here; remote images are noted in `Walk.remote`, not fetched.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reference_gateway.errors import echo, invalid_request, refused
from reference_gateway.policy.models import ModelInfo
from reference_gateway.policy.vocabulary import Profile

Block = dict[str, Any]
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


@dataclass(frozen=True)
class InlineImage:
    media_type: str
    data: str  # base64, no `data:` prefix


@dataclass(frozen=True)
class RemoteImage:
    path: str  # e.g. messages[0].content[2].image_url.url, for error messages
    url: str


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


class Walk:
    """Per-call scratch state of one translation (never shared, never global)."""

    def __init__(self, carry_reasoning: bool = False) -> None:
        self.client_breakpoints = False
        self.remote: list[RemoteImage] = []
        # The history's reasoning blocks are a bridge's (RequestOptions.carry_reasoning): sent back whatever the
        # profile.
        self.carry_reasoning = carry_reasoning

    def note_cache_control(self, part: Mapping[str, Any], block: Block) -> Block:
        if part.get("cache_control") is not None:
            self.client_breakpoints = True
            return {**block, "cache_control": part["cache_control"]}
        return block


def refuse_or_drop(template: str | None, **values: str) -> None:
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
    walk: Walk,
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


def _file_block(part: Mapping[str, Any], path: str, profile: Profile, walk: Walk) -> Block | None:
    if not profile.anthropic.convert_files:
        return None  # LYRouter: "Anthropic-protocol channels convert only text blocks and image blocks"
    file = part.get("file")
    file_path = f"{path}.file"
    if not isinstance(file, dict):
        raise invalid_request(f"{file_path}: must be an object", file_path)
    data_url = file.get("file_data")
    if data_url is None and file.get("file_id") is not None:
        refuse_or_drop(profile.messages.file_id_part, path=file_path)
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
    walk: Walk,
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
            refuse_or_drop(profile.messages.input_audio_part, path=part_path)
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


def _reasoning_blocks(message: Mapping[str, Any], profile: Profile, carry: bool) -> list[Block]:
    """LYRouter: an assistant message put back with its `reasoning_blocks` hands the signed thinking blocks back
    to the upstream, unchanged and first (Anthropic wants them before the text and tool calls); so does any profile
    for a bridge that carries reasoning (`carry`: the blocks came from the provider through the bridge's own API)."""
    raw = message.get("reasoning_blocks") if profile.anthropic.reasoning_output or carry else None
    if not isinstance(raw, list):
        return []
    return [
        dict(b) for b in raw if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
    ]


def _assistant_content(message: Mapping[str, Any], path: str, profile: Profile, walk: Walk) -> list[Block]:
    blocks: list[Block] = _reasoning_blocks(message, profile, walk.carry_reasoning)
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


def _tool_result(message: Mapping[str, Any], path: str, walk: Walk) -> Block:
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


def messages_to_anthropic(
    raw: Any, model: ModelInfo, profile: Profile, images: Mapping[str, InlineImage], walk: Walk
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
            refuse_or_drop(profile.messages.function_role, path=f"{path}.role")
        elif role is None:
            raise invalid_request(f"{path}.role: is required", f"{path}.role")
        else:
            raise invalid_request(f"{path}.role: unknown role {echo(repr(role))}", f"{path}.role")
    if not turns:
        raise invalid_request(profile.messages.no_user_message, "messages")
    return _system_blocks(system_texts), turns


def tools_to_anthropic(raw: Any, profile: Profile, walk: Walk) -> list[Block]:
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
            refuse_or_drop(profile.messages.non_function_tool, path=f"{path}.type")
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
