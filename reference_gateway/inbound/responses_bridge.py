"""OpenAI Responses ⇄ Chat Completions (pure): a Responses request in the flows' own vocabulary (a chat body), and
a flow's completion or chunk stream back as a Response object or Responses stream events (OpenAI API reference:
Responses: Create, The response object, Streaming events; specs/responses/contract.md).

Every model is served through the flow, whatever family is behind it: a Responses request becomes a chat request,
and the flow serves it as it serves any chat request (its channels, fallback, refusals). What the chat vocabulary
cannot carry (reasoning items and their `encrypted_content`, hosted tools) is refused with a 400 where the client
asked for it, never silently dropped.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# finish_reason -> (status, incomplete reason); a finish the chat vocabulary has no Responses word for completes.
FINISH = {"stop": ("completed", None), "tool_calls": ("completed", None), "function_call": ("completed", None),
          "length": ("incomplete", "max_output_tokens"),
          "content_filter": ("incomplete", "content_filter")}  # fmt: skip
# The request fields a Response object echoes back as the request set them (The response object).
ECHOED = ("instructions", "max_output_tokens", "metadata", "parallel_tool_calls", "temperature", "top_p",
          "tool_choice", "tools", "previous_response_id", "user", "safety_identifier")  # fmt: skip


class BridgeRefusal(ValueError):
    """A request the bridge cannot serve faithfully: `param` names the field (a 400 for the client)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(24)}"


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text of its input_text / output_text parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text")
    )


def _user_parts(content: Any, where: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for j, part in enumerate(content if isinstance(content, list) else []):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "text"):
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "input_image":
            url = part.get("image_url")
            if not isinstance(url, str) or not url:
                raise BridgeRefusal(
                    f"{where}.content[{j}]: an input_image needs image_url", f"{where}.content"
                )
            image: dict[str, Any] = {"url": url}
            if part.get("detail") in ("low", "high", "auto"):
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
        else:
            raise BridgeRefusal(
                f"{where}.content[{j}]: content part type {kind!r} is not supported by this gateway",
                f"{where}.content",
            )
    return parts


def input_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's `input` as chat messages (its `instructions` apart: they are not carried into a stored
    conversation, as OpenAI does not carry a previous response's instructions)."""
    messages: list[dict[str, Any]] = []
    given = body.get("input")
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
        return messages
    if not isinstance(given, list) or not given:
        raise BridgeRefusal("input: a string or a non-empty list of input items is required", "input")
    pending_calls: list[dict[str, Any]] = []  # consecutive function_call items: one assistant turn

    def flush() -> None:
        if pending_calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": list(pending_calls)})
            pending_calls.clear()

    for i, item in enumerate(given):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise BridgeRefusal(f"{where}: an input item is an object", "input")
        kind = item.get("type", "message")
        if kind == "function_call":
            arguments = item.get("arguments")
            pending_calls.append({
                "id": item.get("call_id"), "type": "function",
                "function": {"name": item.get("name"), "arguments": arguments if isinstance(arguments, str) else "{}"},
            })  # fmt: skip
            continue
        flush()
        if kind == "function_call_output":
            output = item.get("output")
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": _text_of(output)}
            )
        elif kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                messages.append({"role": role, "content": _text_of(item.get("content"))})
            elif role == "assistant":
                messages.append({"role": "assistant", "content": _text_of(item.get("content"))})
            elif role == "user":
                messages.append({"role": "user", "content": _user_parts(item.get("content"), where)})
            else:
                raise BridgeRefusal(
                    f"{where}.role: {role!r} is not user, assistant, system or developer", "input"
                )
        elif kind == "reasoning":
            # The chat vocabulary has no place for a reasoning item (nor its encrypted_content): refused, so a
            # client that must round-trip it learns so instead of losing it.
            raise BridgeRefusal(f"{where}: reasoning items cannot be carried to this model", "input")
        else:
            raise BridgeRefusal(
                f"{where}: input item type {kind!r} is not supported by this gateway", "input"
            )
    flush()
    return messages


def _tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    given = body.get("tools") or []
    if not isinstance(given, list):
        raise BridgeRefusal("Invalid type for 'tools': expected an array of tools.", "tools")
    for i, tool in enumerate(given):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else tool
            raise BridgeRefusal(f"tools[{i}]: tool type {kind!r} is not supported by this gateway", "tools")
        function: dict[str, Any] = {"name": tool.get("name"), "description": tool.get("description") or ""}
        function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
        if tool.get("strict") is not None:
            function["strict"] = tool["strict"]
        tools.append({"type": "function", "function": function})
    return tools


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise BridgeRefusal(f"tool_choice: {json.dumps(choice)} is not supported by this gateway", "tool_choice")


def _format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    if fmt.get("type") == "json_schema":
        schema: dict[str, Any] = {"name": fmt.get("name") or "response", "schema": fmt.get("schema") or {}}
        if fmt.get("strict") is not None:
            schema["strict"] = fmt["strict"]
        return {"type": "json_schema", "json_schema": schema}
    raise BridgeRefusal(f"text.format.type: {fmt.get('type')!r} is not supported", "text.format")


def chat_request(body: Mapping[str, Any], history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The chat body for a Responses request, after `history` (a stored conversation it continues); a field the
    bridge cannot carry raises BridgeRefusal."""
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
    messages += [*(history or []), *input_messages(body)]
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if body.get("max_output_tokens") is not None:
        chat["max_completion_tokens"] = body["max_output_tokens"]
    for name in ("temperature", "top_p", "parallel_tool_calls"):
        if body.get(name) is not None:
            chat[name] = body[name]
    user = body.get("safety_identifier") or body.get("user")
    if isinstance(user, str) and user:
        chat["user"] = user
    tools = _tools(body)
    if tools:
        chat["tools"] = tools
    if body.get("tool_choice") is not None:
        chat["tool_choice"] = _tool_choice(body["tool_choice"])
    response_format = _format(body.get("text"))
    if response_format is not None:
        chat["response_format"] = response_format
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort") is not None:
        chat["reasoning_effort"] = reasoning["effort"]
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return chat


def assistant_turn(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A response's output as the chat messages that continue a conversation: its text and its calls, one
    assistant turn."""
    text = "".join(
        str(part.get("text", ""))
        for item in response.get("output") or []
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    )
    calls = [
        {"id": item.get("call_id"), "type": "function",
         "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"}}
        for item in response.get("output") or []
        if isinstance(item, dict) and item.get("type") == "function_call"
    ]  # fmt: skip
    if not text and not calls:
        return []
    turn: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        turn["tool_calls"] = calls
    return [turn]


def usage(chat_usage: Any) -> dict[str, Any]:
    """The Responses usage for an OpenAI chat usage: the same counts under Responses' names."""
    u: dict[str, Any] = chat_usage if isinstance(chat_usage, dict) else {}
    prompt: dict[str, Any] = (
        u["prompt_tokens_details"] if isinstance(u.get("prompt_tokens_details"), dict) else {}
    )
    completion: dict[str, Any] = (
        u["completion_tokens_details"] if isinstance(u.get("completion_tokens_details"), dict) else {}
    )
    input_tokens, output_tokens = int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
    return {
        "input_tokens": input_tokens,
        # cache_write_tokens: openai-python 3.57 types it as required beside cached_tokens.
        "input_tokens_details": {
            "cached_tokens": int(prompt.get("cached_tokens") or 0),
            "cache_write_tokens": int(prompt.get("cache_write_tokens") or 0),
        },
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": int(completion.get("reasoning_tokens") or 0)},
        "total_tokens": int(u.get("total_tokens") or input_tokens + output_tokens),
    }


def _text_format(body: Mapping[str, Any]) -> dict[str, Any]:
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    return {"format": fmt if isinstance(fmt, dict) else {"type": "text"}}


def response_shell(
    body: Mapping[str, Any], response_id: str, model: str, created: int, store: bool = False
) -> dict[str, Any]:
    """A Response object before any output: what the request set, echoed, and status in_progress; `store` says
    whether the gateway keeps it."""
    shell: dict[str, Any] = {
        "id": response_id, "object": "response", "created_at": created, "status": "in_progress",
        "error": None, "incomplete_details": None, "model": model, "output": [],
        "text": _text_format(body), "truncation": "disabled", "usage": None,
        "store": store,
    }  # fmt: skip
    for name in ECHOED:
        shell[name] = body.get(name)
    shell["parallel_tool_calls"] = body.get("parallel_tool_calls", True)
    shell["tool_choice"] = body.get("tool_choice", "auto")
    # The tools as asked, each function tool saying its `strict` (null when the client said nothing).
    shell["tools"] = [
        {**t, "strict": t.get("strict")} if isinstance(t, dict) and t.get("type") == "function" else t
        for t in body.get("tools") or []
    ]
    # What OpenAI's Response carries beside the request's own settings (its defaults when the client set none),
    # and the two penalties the Open Responses schema requires of every Response (0: this gateway applies none).
    for name, default in (("temperature", 1.0), ("top_p", 1.0), ("top_logprobs", 0)):
        shell[name] = default if body.get(name) is None else body[name]
    shell.update({
        "completed_at": None, "background": False, "service_tier": "default", "max_tool_calls": None,
        "prompt_cache_key": body.get("prompt_cache_key"), "presence_penalty": 0.0, "frequency_penalty": 0.0,
    })  # fmt: skip
    shell["metadata"] = body.get("metadata") or {}
    reasoning = body.get("reasoning")
    shell["reasoning"] = reasoning if isinstance(reasoning, dict) else {"effort": None, "summary": None}
    return shell


def _message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}  # fmt: skip


def _call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}  # fmt: skip


def _finish(shell: dict[str, Any], finish: Any) -> None:
    status, reason = FINISH.get(str(finish), ("completed", None))
    shell["status"] = status
    shell["completed_at"] = int(time.time()) if status == "completed" else None
    shell["incomplete_details"] = {"reason": reason} if reason else None


def response(
    completion: Mapping[str, Any], body: Mapping[str, Any], response_id: str, store: bool = False
) -> dict[str, Any]:
    """The Response object for a flow's completion."""
    choices: list[Any] = completion["choices"] if isinstance(completion.get("choices"), list) else []
    choice: dict[str, Any] = choices[0] if choices and isinstance(choices[0], dict) else {}
    said: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else {}
    model = str(completion.get("model") or body.get("model"))
    created = int(completion.get("created") or time.time())
    shell = response_shell(body, response_id, model, created, store)
    output: list[dict[str, Any]] = []
    if isinstance(said.get("content"), str) and said["content"]:
        output.append(_message_item(new_id("msg"), said["content"], "completed"))
    for call in said.get("tool_calls") or []:
        function = call.get("function") or {} if isinstance(call, dict) else {}
        arguments = function.get("arguments")
        output.append(
            _call_item(
                new_id("fc"),
                str(call.get("id") or new_id("call")),
                str(function.get("name")),
                arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
                "completed",
            )
        )
    shell["output"] = output
    shell["usage"] = usage(completion.get("usage"))
    _finish(shell, choice.get("finish_reason"))
    return shell


def event(kind: str, data: Mapping[str, Any], sequence: int) -> bytes:
    payload = {"type": kind, "sequence_number": sequence, **data}
    return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


@dataclass
class _Open:
    """An output item being streamed: its index, id, kind and what has arrived so far."""

    index: int
    id: str
    kind: str  # "message" | "function_call"
    call_id: str = ""
    name: str = ""
    text: list[str] = field(default_factory=list)


@dataclass
class StreamBridge:
    """Chat chunks in, Responses events out: response.created and in_progress first; a message item with one
    output_text part for the text, a function_call item per call, each added, its deltas, done; then
    response.completed (or incomplete) with the whole output and the usage. An error chunk becomes an `error`
    event and response.failed. Every event carries its type as its SSE event name and a sequence_number that
    starts at 0 and grows by one."""

    body: Mapping[str, Any]
    response_id: str
    store: bool = False
    sequence: int = 0
    shell: dict[str, Any] | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    current: _Open | None = None
    calls: dict[Any, _Open] = field(default_factory=dict)  # chat tool-call index -> its item
    finish: Any = None
    usage: dict[str, Any] | None = None
    finished: bool = False
    final: dict[str, Any] | None = None  # the terminal response, once sent

    def _emit(self, kind: str, data: Mapping[str, Any]) -> bytes:
        out = event(kind, data, self.sequence)
        self.sequence += 1
        return out

    def _start(self, chunk: Mapping[str, Any]) -> list[bytes]:
        if self.shell is not None:
            return []
        model = str(chunk.get("model") or self.body.get("model"))
        self.shell = response_shell(
            self.body, self.response_id, model, int(chunk.get("created") or time.time())
        )
        return [
            self._emit("response.created", {"response": dict(self.shell)}),
            self._emit("response.in_progress", {"response": dict(self.shell)}),
        ]

    def feed(self, chunk: Any) -> list[bytes]:
        if not isinstance(chunk, dict) or self.finished:
            return []
        out = self._start(chunk)
        if isinstance(chunk.get("error"), dict):
            return out + self._fail(chunk["error"])
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta: dict[str, Any] = choice["delta"] if isinstance(choice.get("delta"), dict) else {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                out += self._text(text)
            for call in delta.get("tool_calls") or []:
                out += self._call(call)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        return out

    def end(self) -> list[bytes]:
        if self.finished:
            return []
        out = self._start({}) + self._close_all()
        self.finished = True
        assert self.shell is not None
        shell = dict(self.shell)
        shell["output"] = list(self.items)
        shell["usage"] = self.usage or usage({})
        _finish(shell, self.finish)
        terminal = "response.completed" if shell["status"] == "completed" else "response.incomplete"
        out.append(self._emit(terminal, {"response": shell}))
        self.final = shell
        return out

    def _fail(self, error: Mapping[str, Any]) -> list[bytes]:
        out: list[bytes] = []  # items cut by the failure stay as they were: in_progress, not done
        self.finished = True
        message = str(error.get("message") or "The upstream provider's stream failed.")
        code = error.get("code") if isinstance(error.get("code"), str) else "server_error"
        out.append(self._emit("error", {"code": code, "message": message, "param": None}))
        assert self.shell is not None
        shell = dict(self.shell)
        shell["status"] = "failed"
        shell["output"] = [item for item in self.items if item]
        shell["error"] = {"code": code, "message": message}
        out.append(self._emit("response.failed", {"response": shell}))
        return out

    def _open(self, kind: str, call_id: str = "", name: str = "") -> tuple[_Open, list[bytes]]:
        # A new message item closes everything open; a new call closes an open message item only (the calls
        # of one answer may stream side by side, each event naming its item and output_index).
        out = self._close_all() if kind == "message" else self._close(self.current)
        opened = _Open(
            index=len(self.items),
            id=new_id("msg" if kind == "message" else "fc"),
            kind=kind,
            call_id=call_id,
            name=name,
        )
        if kind == "message":
            self.current = opened
            item = _message_item(opened.id, "", "in_progress")
            item["content"] = []
            out.append(self._emit("response.output_item.added", {"output_index": opened.index, "item": item}))
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            out.append(self._emit("response.content_part.added", {
                "item_id": opened.id, "output_index": opened.index, "content_index": 0, "part": part}))  # fmt: skip
        else:
            item = _call_item(opened.id, opened.call_id, opened.name, "", "in_progress")
            out.append(self._emit("response.output_item.added", {"output_index": opened.index, "item": item}))
        # A placeholder keeps output_index order; the finished item replaces it when the item is done.
        self.items.append({})
        return opened, out

    def _close_all(self) -> list[bytes]:
        out = self._close(self.current)
        for opened in sorted(self.calls.values(), key=lambda o: o.index):
            out += self._close(opened)
        return out

    def _close(self, opened: _Open | None) -> list[bytes]:
        if opened is None or self.items[opened.index]:
            return []  # nothing open, or already done
        if opened is self.current:
            self.current = None
        joined = "".join(opened.text)
        where = {"item_id": opened.id, "output_index": opened.index}
        out: list[bytes] = []
        if opened.kind == "message":
            part = {"type": "output_text", "text": joined, "annotations": [], "logprobs": []}
            out.append(self._emit("response.output_text.done", {**where, "content_index": 0, "text": joined,
                                                                "logprobs": []}))  # fmt: skip
            out.append(self._emit("response.content_part.done", {**where, "content_index": 0, "part": part}))
            item = _message_item(opened.id, joined, "completed")
        else:
            out.append(self._emit("response.function_call_arguments.done", {**where, "arguments": joined}))
            item = _call_item(opened.id, opened.call_id, opened.name, joined, "completed")
        self.items[opened.index] = item
        out.append(self._emit("response.output_item.done", {"output_index": opened.index, "item": item}))
        return out

    def _text(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        opened = self.current
        if opened is None:
            opened, out = self._open("message")
        opened.text.append(text)
        out.append(self._emit("response.output_text.delta", {
            "item_id": opened.id, "output_index": opened.index, "content_index": 0, "delta": text,
            "logprobs": []}))  # fmt: skip
        return out

    def _call(self, call: Any) -> list[bytes]:
        if not isinstance(call, dict):
            return []
        position = call.get("index", 0)
        function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
        out: list[bytes] = []
        opened = self.calls.get(position)
        if opened is None:
            opened, out = self._open(
                "function_call", call_id=str(call.get("id") or new_id("call")), name=str(function.get("name"))
            )
            self.calls[position] = opened
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            opened.text.append(arguments)
            out.append(self._emit("response.function_call_arguments.delta", {
                "item_id": opened.id, "output_index": opened.index, "delta": arguments}))  # fmt: skip
        return out
