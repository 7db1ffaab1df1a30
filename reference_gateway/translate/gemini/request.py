"""OpenAI Chat Completions request → Gemini `generateContent` request (pure).

Relay "Tool calling": tools become `functionDeclarations` (the JSON-schema keywords Gemini rejects removed),
assistant tool calls `functionCall` parts, tool messages `functionResponse` parts. "Images and content parts":
images and PDF file parts become `inlineData`; other part types are dropped. Remote images are not fetched
here: they are reported in `GeminiRequest.remote_images` and passed back in as `images`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reference_gateway.errors import invalid_request
from reference_gateway.translate.content import InlineImage, RemoteImage, parse_data_url

Part = dict[str, Any]

# The keywords of Gemini's `Schema` object (google-genai `types.Schema`, in the API's camelCase). Everything
# else — `$schema`, `additionalProperties`, `$ref`, `$defs`, `oneOf`, `const`, ... — is removed.
_SCHEMA_KEYWORDS = frozenset(
    {
        "anyOf",
        "default",
        "description",
        "enum",
        "example",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "nullable",
        "pattern",
        "properties",
        "propertyOrdering",
        "required",
        "title",
        "type",
    }
)


@dataclass(frozen=True)
class GeminiRequest:
    body: dict[str, Any]
    stream: bool
    include_usage: bool
    remote_images: tuple[RemoteImage, ...] = field(default=())


def clean_schema(schema: Any) -> Any:
    """A JSON schema with only the keywords Gemini accepts, at every level (property names are kept: they are
    names, not keywords). A type list with "null" becomes the other type plus `nullable: true`."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in _SCHEMA_KEYWORDS:
            continue
        if key == "properties" and isinstance(value, Mapping):
            out[key] = {name: clean_schema(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = clean_schema(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [clean_schema(sub) for sub in value]
        elif key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            if len(types) == 1:
                out["type"] = types[0]
            if "null" in value:
                out["nullable"] = True
        else:
            out[key] = value
    return out


def _text_of(content: Any, path: str) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise invalid_request(f"{path}: must be a string or a list of parts", path)
    return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _image_part(
    part: Mapping[str, Any], path: str, images: Mapping[str, InlineImage], remote: list[RemoteImage]
) -> Part | None:
    image_url = part.get("image_url")
    url = image_url.get("url") if isinstance(image_url, dict) else image_url
    url_path = f"{path}.image_url.url"
    if not isinstance(url, str) or not url:
        raise invalid_request(f"{url_path}: is required", url_path)
    parsed = parse_data_url(url, validate=False)
    if parsed is not None:
        return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}
    if url.split(":", 1)[0].lower() in ("http", "https"):
        fetched = images.get(url_path)
        if fetched is None:
            # Gemini takes bytes (inlineData), not a web URL: the gateway downloads it first.
            remote.append(RemoteImage(url_path, url))
            return None
        return {"inlineData": {"mimeType": fetched.media_type, "data": fetched.data}}
    raise invalid_request(f"{url_path}: must be a data URL or an http(s) URL", url_path)


def _file_part(part: Mapping[str, Any]) -> Part | None:
    file = part.get("file")
    data_url = file.get("file_data") if isinstance(file, dict) else None
    parsed = parse_data_url(data_url, validate=False) if isinstance(data_url, str) else None
    if parsed is None:
        return None  # a file_id or a malformed file part has nothing Gemini can read: dropped
    return {"inlineData": {"mimeType": parsed[0], "data": parsed[1]}}


def _user_parts(
    content: Any, path: str, images: Mapping[str, InlineImage], remote: list[RemoteImage]
) -> list[Part]:
    if isinstance(content, str):
        return [{"text": content}]
    if not isinstance(content, list):
        raise invalid_request(f"{path}: must be a string or a list of parts", path)
    parts: list[Part] = []
    for j, item in enumerate(content):
        if not isinstance(item, dict):
            raise invalid_request(f"{path}[{j}]: must be an object", f"{path}[{j}]")
        kind = item.get("type")
        out: Part | None = None
        if kind == "text" and isinstance(item.get("text"), str):
            out = {"text": item["text"]}
        elif kind == "image_url":
            out = _image_part(item, f"{path}[{j}]", images, remote)
        elif kind == "file":
            out = _file_part(item)
        # Relay: "Other part types (input_audio, …) are ... dropped for Anthropic and Gemini".
        if out is not None:
            parts.append(out)
    return parts


def _arguments(call: Mapping[str, Any], path: str) -> tuple[str, dict[str, Any]]:
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise invalid_request(f"{path}.function.name: must be a string", f"{path}.function.name")
    raw = function.get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise invalid_request(
            f"{path}.function.arguments: must be a JSON object", f"{path}.function.arguments"
        )
    return function["name"], args


def _function_response(content: Any, path: str) -> dict[str, Any]:
    """Gemini wants an object: a tool result that is a JSON object is sent as it is, anything else (plain text,
    a JSON array or number) as `{"output": <the text>}` (the key Gemini documents for a function's output)."""
    text = "".join(_text_of(content, path))
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"output": text}


def _append(contents: list[dict[str, Any]], role: str, parts: list[Part]) -> None:
    """Consecutive turns of one role become one content (Gemini alternates user and model)."""
    if not parts:
        return
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)
    else:
        contents.append({"role": role, "parts": list(parts)})


def _signatures(message: Mapping[str, Any]) -> dict[str, str]:
    """A bridge's Gemini thought signatures of an assistant message (`reasoning_blocks` of type thought_signature),
    by the tool call they belong to."""
    found: dict[str, str] = {}
    blocks = message.get("reasoning_blocks")
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict) or block.get("type") != "thought_signature":
            continue
        signature, owner = block.get("signature"), block.get("tool_call_id")
        if isinstance(signature, str) and signature and isinstance(owner, str):
            found[owner] = signature
    return found


def _contents(
    raw: Any, images: Mapping[str, InlineImage], remote: list[RemoteImage], carry: bool = False
) -> tuple[list[str], list[dict[str, Any]]]:
    if not isinstance(raw, list) or not raw:
        raise invalid_request("messages: must be a non-empty list", "messages")
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool_call_id → function name (functionResponse is matched by name)
    for i, message in enumerate(raw):
        path = f"messages[{i}]"
        if not isinstance(message, dict):
            raise invalid_request(f"{path}: must be an object", path)
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(_text_of(message.get("content"), f"{path}.content"))
        elif role == "user":
            _append(contents, "user", _user_parts(message.get("content"), f"{path}.content", images, remote))
        elif role == "assistant":
            parts: list[Part] = [
                {"text": t} for t in _text_of(message.get("content"), f"{path}.content") if t
            ]
            # Thought signatures go back on the calls that carried them (Gemini API, Thought signatures: Gemini 3
            # refuses a current turn's function call without its signature).
            signed = _signatures(message) if carry else {}
            calls = message.get("tool_calls")
            for k, call in enumerate(calls if isinstance(calls, list) else []):
                call_path = f"{path}.tool_calls[{k}]"
                if not isinstance(call, dict):
                    raise invalid_request(f"{call_path}: must be an object", call_path)
                name, args = _arguments(call, call_path)
                if isinstance(call.get("id"), str):
                    names[call["id"]] = name
                # The id is the gateway's own: Gemini has none, so only the name and arguments go back.
                part: Part = {"functionCall": {"name": name, "args": args}}
                signature = signed.get(str(call.get("id")))
                if signature is not None:
                    part["thoughtSignature"] = signature
                parts.append(part)
            _append(contents, "model", parts)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in names:
                raise invalid_request(
                    f"{path}.tool_call_id: must be the id of a tool call in an earlier assistant message",
                    f"{path}.tool_call_id",
                )
            response = _function_response(message.get("content"), f"{path}.content")
            _append(contents, "user", [{"functionResponse": {"name": names[call_id], "response": response}}])
        elif role is None:
            raise invalid_request(f"{path}.role: is required", f"{path}.role")
        else:
            raise invalid_request(f"{path}.role: unknown role {role!r}", f"{path}.role")
    if not contents and not remote:
        raise invalid_request("messages: must contain at least one user message", "messages")
    return system, contents


def _tools(raw: Any) -> list[dict[str, Any]]:
    declarations: list[dict[str, Any]] = []
    for tool in raw if isinstance(raw, list) else []:
        function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue  # only function tools translate
        declaration: dict[str, Any] = {"name": function["name"]}
        if isinstance(function.get("description"), str):
            declaration["description"] = function["description"]
        if isinstance(function.get("parameters"), dict):
            declaration["parameters"] = clean_schema(function["parameters"])
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}] if declarations else []


def _tool_config(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if raw in ("auto", "none"):
        return {"functionCallingConfig": {"mode": str(raw).upper()}}
    if raw == "required":
        return {"functionCallingConfig": {"mode": "ANY"}}
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
        name = raw["function"].get("name")
        if isinstance(name, str):
            return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
    raise invalid_request('tool_choice: use "auto", "none", "required" or a function', "tool_choice")


def _generation_config(body: Mapping[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for source, target in (
        ("temperature", "temperature"),
        ("top_p", "topP"),
        ("seed", "seed"),
        ("presence_penalty", "presencePenalty"),
        ("frequency_penalty", "frequencyPenalty"),
    ):
        if isinstance(body.get(source), int | float) and not isinstance(body.get(source), bool):
            config[target] = body[source]
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if isinstance(limit, int) and not isinstance(limit, bool):
        config["maxOutputTokens"] = limit
    stop = body.get("stop")
    if isinstance(stop, str):
        config["stopSequences"] = [stop]
    elif isinstance(stop, list) and stop:
        config["stopSequences"] = [s for s in stop if isinstance(s, str)]
    response_format = body.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind in ("json_object", "json_schema"):
        config["responseMimeType"] = "application/json"
        spec = response_format.get("json_schema") if isinstance(response_format, dict) else None
        if isinstance(spec, dict) and isinstance(spec.get("schema"), dict):
            config["responseSchema"] = clean_schema(spec["schema"])
    return config


def chat_to_gemini(
    body: Mapping[str, Any], *, images: Mapping[str, InlineImage] | None = None, carry_reasoning: bool = False
) -> GeminiRequest:
    """The `generateContent` body for one Chat Completions body (the model goes in the URL, not the body).
    `user`, `metadata`, `cache_control`, `output_config`, `anthropic_tools` and fields Gemini has no
    equivalent for are not sent; `carry_reasoning`: a bridge's thought signatures (`reasoning_blocks`) go back on
    their parts."""
    remote: list[RemoteImage] = []
    system, contents = _contents(body.get("messages"), images or {}, remote, carry_reasoning)
    out: dict[str, Any] = {"contents": contents}
    if system:
        out["systemInstruction"] = {"parts": [{"text": t} for t in system]}
    tools = _tools(body.get("tools"))
    if tools:
        out["tools"] = tools
        tool_config = _tool_config(body.get("tool_choice"))
        if tool_config is not None:
            out["toolConfig"] = tool_config
    config = _generation_config(body)
    if config:
        out["generationConfig"] = config
    stream = body.get("stream") is True
    options = body.get("stream_options")
    include_usage = stream and isinstance(options, dict) and options.get("include_usage") is True
    return GeminiRequest(out, stream, include_usage, tuple(remote))
