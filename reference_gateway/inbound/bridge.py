"""Messages ⇄ Chat Completions, the reverse of the family translations (pure): a Messages request in the flows'
own vocabulary (a chat body), and a flow's completion or chunk stream back as a Message or Messages events
(docs/wire-reference.md §1 and §2). Used for models the gateway serves from a non-Anthropic family: what the
chat vocabulary cannot carry (thinking blocks and their signatures, cache breakpoints, `top_k`, which stop
sequence matched) is not invented on the way back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# finish_reason -> stop_reason (a chat `stop` does not say whether a stop sequence matched: end_turn).
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                "function_call": "tool_use", "content_filter": "refusal"}  # fmt: skip
# OpenAI error type -> Anthropic error type, for a stream's error event (by status where there is one).
_ERROR_TYPES = {"rate_limit_error": "rate_limit_error", "invalid_request_error": "invalid_request_error",
                "authentication_error": "authentication_error", "permission_error": "permission_error",
                "not_found_error": "not_found_error", "overloaded_error": "overloaded_error"}  # fmt: skip


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _user_parts(blocks: list[Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block.get("text", "")})
        elif block.get("type") == "image":
            source: dict[str, Any] = block.get("source") or {}
            url = (
                f"data:{source.get('media_type')};base64,{source.get('data')}"
                if source.get("type") == "base64"
                else str(source.get("url"))
            )
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def chat_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """The chat body for a Messages request (fields the chat vocabulary has no place for are left out)."""
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text(system)})
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if isinstance(content, str):
            messages.append({"role": role, "content": content})
            continue
        blocks = content if isinstance(content, list) else []
        if role == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": _text(blocks) or None}
            calls = [{"id": b.get("id"), "type": "function",
                      "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input") or {})}}
                     for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]  # fmt: skip
            if calls:
                out["tool_calls"] = calls
            messages.append(out)
            continue
        for block in blocks:  # tool results first, each its own tool message, answering its call
            if isinstance(block, dict) and block.get("type") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": block.get("tool_use_id"),
                                 "content": _text(block.get("content"))})  # fmt: skip
        parts = _user_parts(blocks)
        if parts:
            messages.append({"role": "user", "content": parts})
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if "max_tokens" in body:
        # the current field: OpenAI's reasoning models refuse max_tokens (openai-python: "not compatible with
        # o-series models"), and every chat flow reads max_completion_tokens first
        chat["max_completion_tokens"] = body["max_tokens"]
    for name in ("temperature", "top_p"):
        if name in body:
            chat[name] = body[name]
    if body.get("stop_sequences"):
        chat["stop"] = body["stop_sequences"]
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    user = (body.get("metadata") or {}).get("user_id") if isinstance(body.get("metadata"), dict) else None
    if user:
        chat["user"] = user
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and "input_schema" in t]
    if tools:
        chat["tools"] = [{"type": "function", "function": {"name": t.get("name"), "description": t.get("description", ""),
                          "parameters": t.get("input_schema")}} for t in tools]  # fmt: skip
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        kind = choice.get("type")
        if kind in ("auto", "none"):
            chat["tool_choice"] = kind
        elif kind == "any":
            chat["tool_choice"] = "required"
        elif kind == "tool":
            chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
        if choice.get("disable_parallel_tool_use") is True and tools:
            chat["parallel_tool_calls"] = False
    return chat


def usage(chat_usage: Any) -> dict[str, int]:
    """Anthropic's usage for an OpenAI-shaped one: input_tokens excludes the cache reads inside prompt_tokens."""
    u: dict[str, Any] = chat_usage if isinstance(chat_usage, dict) else {}
    details: dict[str, Any] = (
        u["prompt_tokens_details"] if isinstance(u.get("prompt_tokens_details"), dict) else {}
    )
    cached = int(details.get("cached_tokens") or 0)
    return {"input_tokens": max(0, int(u.get("prompt_tokens") or 0) - cached),
            "output_tokens": int(u.get("completion_tokens") or 0),
            "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}  # fmt: skip


def message(completion: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The Message for a flow's completion."""
    choices: list[Any] = completion["choices"] if isinstance(completion.get("choices"), list) else []
    choice: dict[str, Any] = choices[0] if choices and isinstance(choices[0], dict) else {}
    said: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
    content: list[dict[str, Any]] = []
    if isinstance(said.get("content"), str) and said["content"]:
        content.append({"type": "text", "text": said["content"]})
    for call in said.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = {}
        content.append(
            {"type": "tool_use", "id": call.get("id"), "name": function.get("name"), "input": arguments}
        )
    return {"id": f"msg_{completion.get('id', '')}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": STOP_REASONS.get(str(choice.get("finish_reason")), "end_turn"),
            "stop_sequence": None, "usage": usage(completion.get("usage"))}  # fmt: skip


def event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


def error_type(status: int | None, openai_type: Any) -> str:
    by_status = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                 404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}  # fmt: skip
    if status in by_status:
        return by_status[status]
    return _ERROR_TYPES.get(str(openai_type), "api_error")


def estimate_input_tokens(body: Mapping[str, Any]) -> int:
    """An estimate of a Messages request's input tokens (about four bytes of its text a token), for `message_start`:
    a chat provider counts them only at the end of its stream, and a client that reads the start's usage (Claude
    Code's context meter) would otherwise see 0. The provider's own count follows in `message_delta`."""
    parts = [body.get("system"), body.get("messages"), body.get("tools")]
    size = sum(len(json.dumps(part, ensure_ascii=False)) for part in parts if part)
    return max(1, size // 4)


@dataclass
class StreamBridge:
    """Chat chunks in, Messages events out: a text block for content, a tool_use block per call, the stop
    reason and the usage in message_delta at the end, an error event for an error chunk. `message_start` carries
    an estimate of the input tokens (`input_estimate`); the provider's count replaces it in `message_delta`."""

    model: str
    input_estimate: int = 1
    started: bool = False
    index: int = -1
    open_kind: str | None = None
    calls: dict[int, int] = field(default_factory=dict)  # chat tool index -> block index
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(default_factory=lambda: usage({}))
    finished: bool = False

    def feed(self, chunk: Any) -> list[bytes]:
        if not isinstance(chunk, dict) or self.finished:
            return []
        out = self._start(chunk)
        if isinstance(chunk.get("error"), dict):
            error = chunk["error"]
            self.finished = True
            kind = error_type(None, error.get("type"))
            return [*out, event("error", {"error": {"type": kind, "message": str(error.get("message", ""))}})]
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta: dict[str, Any] = choice["delta"] if isinstance(choice.get("delta"), dict) else {}
            if isinstance(delta.get("content"), str) and delta["content"]:
                if self.open_kind != "text":
                    out += self._open({"type": "text", "text": ""}, "text")
                out.append(event("content_block_delta", {"index": self.index,
                                 "delta": {"type": "text_delta", "text": delta["content"]}}))  # fmt: skip
            for call in delta.get("tool_calls") or []:
                out += self._tool(call)
            if choice.get("finish_reason"):
                self.stop_reason = STOP_REASONS.get(str(choice["finish_reason"]), "end_turn")
        return out

    def end(self) -> list[bytes]:
        if self.finished:
            return []
        self.finished = True
        out = self._start({}) + self._close()
        out.append(event("message_delta", {"delta": {"stop_reason": self.stop_reason, "stop_sequence": None},
                                           "usage": self.usage}))  # fmt: skip
        out.append(event("message_stop", {}))
        return out

    def _start(self, chunk: Mapping[str, Any]) -> list[bytes]:
        if self.started:
            return []
        self.started = True
        return [event("message_start", {"message": {
            "id": f"msg_{chunk.get('id', '')}", "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": self.input_estimate, "output_tokens": 0}}})]  # fmt: skip

    def _close(self) -> list[bytes]:
        if self.open_kind is None:
            return []
        self.open_kind = None
        return [event("content_block_stop", {"index": self.index})]

    def _open(self, block: dict[str, Any], kind: str) -> list[bytes]:
        out = self._close()
        self.index += 1
        self.open_kind = kind
        out.append(event("content_block_start", {"index": self.index, "content_block": block}))
        return out

    def _tool(self, call: Any) -> list[bytes]:
        if not isinstance(call, dict):
            return []
        position = call.get("index", 0)
        function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
        out: list[bytes] = []
        if position not in self.calls:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": call.get("id") or f"toolu_{position}",
                "name": function.get("name"),
                "input": {},
            }
            out += self._open(block, f"tool:{position}")
            self.calls[position] = self.index
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            out.append(event("content_block_delta", {"index": self.calls[position],
                             "delta": {"type": "input_json_delta", "partial_json": arguments}}))  # fmt: skip
        return out
