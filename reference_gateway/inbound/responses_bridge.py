"""OpenAI Responses ⇄ Chat Completions (pure): a Responses request in the flows' own vocabulary (a chat body), and
a flow's completion or chunk stream back as a Response object or Responses stream events (OpenAI API reference:
Responses: Create, The response object, Streaming events; specs/responses/contract.md).

Every model is served through the flow, whatever family is behind it: a Responses request becomes a chat request,
and the flow serves it as it serves any chat request (its channels, fallback, refusals). A custom (freeform) tool
is offered as a function taking its text and its call comes back as a `custom_tool_call` (custom_tools.py); the
provider's reasoning blocks (Anthropic's signed thinking, Gemini's thought signatures) come back as a reasoning item
of the gateway's own making, which the next turn turns back into those blocks (reasoning_items.py). What the chat
vocabulary cannot carry (another maker's reasoning items and their `encrypted_content`, hosted tools) is refused
with a 400 where the client asked for it, never silently dropped. The stream's events: responses_stream.py.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any

from reference_gateway.inbound import compaction, custom_tools, reasoning_items

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
    # The blocks of this gateway's reasoning items before the assistant item they belong to (a reasoning item comes
    # before the message or the calls of its turn).
    pending_blocks: list[dict[str, Any]] = []
    reasoning_at = ""

    def flush() -> None:
        if pending_calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": list(pending_calls)})
            pending_calls.clear()
            _with_blocks(messages[-1], pending_blocks)

    for i, item in enumerate(given):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise BridgeRefusal(f"{where}: an input item is an object", "input")
        kind = item.get("type", "message")
        if kind in ("function_call", "custom_tool_call"):
            # A custom tool's call goes back as the function it was offered as, its input as `{"input": …}`.
            arguments = item.get("arguments") if kind == "function_call" else None
            if kind == "custom_tool_call":
                arguments = custom_tools.arguments(str(item.get("input") or ""))
            pending_calls.append({
                "id": item.get("call_id"), "type": "function",
                "function": {"name": item.get("name"), "arguments": arguments if isinstance(arguments, str) else "{}"},
            })  # fmt: skip
            continue
        if kind == "reasoning":
            blocks = reasoning_items.opened(item)
            if blocks is None:
                # Another maker's reasoning item (an encrypted_content only its provider can read): the chat
                # vocabulary has no place for it; refused, so a client that must round-trip it learns so.
                raise BridgeRefusal(f"{where}: reasoning items cannot be carried to this model", "input")
            flush()
            pending_blocks.extend(blocks)
            reasoning_at = str(item.get("id") or where)
            continue
        flush()
        if pending_blocks and not (kind == "message" and item.get("role") == "assistant"):
            # OpenAI's own words: a reasoning item is followed by the message or the calls of its turn.
            raise BridgeRefusal(
                f"Item '{reasoning_at}' of type 'reasoning' was provided without its required following item.",
                "input",
            )
        if kind in ("function_call_output", "custom_tool_call_output"):
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
                _with_blocks(messages[-1], pending_blocks)
            elif role == "user":
                messages.append({"role": "user", "content": _user_parts(item.get("content"), where)})
            else:
                raise BridgeRefusal(
                    f"{where}.role: {role!r} is not user, assistant, system or developer", "input"
                )
        elif kind == "compaction":
            summary = compaction.opened(item)
            if summary is None:  # another maker's (the provider's own): nothing here can open it
                raise BridgeRefusal(
                    f"{where}: a compaction item not made by this gateway cannot be read", "input"
                )
            messages.append({"role": "assistant", "content": compaction.SUMMARY_HEADING + summary})
        else:
            raise BridgeRefusal(
                f"{where}: input item type {kind!r} is not supported by this gateway", "input"
            )
    flush()
    if pending_blocks:
        raise BridgeRefusal(
            f"Item '{reasoning_at}' of type 'reasoning' was provided without its required following item.",
            "input",
        )
    return messages


def _with_blocks(message: dict[str, Any], blocks: list[dict[str, Any]]) -> None:
    """The assistant turn gets the reasoning blocks that came before it (then they are spent)."""
    if blocks:
        message["reasoning_blocks"] = list(blocks)
        blocks.clear()


def _tools(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    given = body.get("tools") or []
    if not isinstance(given, list):
        raise BridgeRefusal("Invalid type for 'tools': expected an array of tools.", "tools")
    for i, tool in enumerate(given):
        if isinstance(tool, dict) and tool.get("type") == "custom" and isinstance(tool.get("name"), str):
            tools.append(custom_tools.as_function(tool))
            continue
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
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom") and choice.get("name"):
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
    _answered_calls(messages)
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


def _answered_calls(messages: list[dict[str, Any]]) -> None:
    """Every tool result answers a call made before it (OpenAI answers 400 "No tool call found for function call
    output with call_id …"; a provider given an orphan result refuses or misreads it)."""
    called: set[Any] = set()
    for message in messages:
        for call in message.get("tool_calls") or []:
            called.add(call.get("id"))
        if message.get("role") == "tool" and message.get("tool_call_id") not in called:
            raise BridgeRefusal(
                f"No tool call found for function call output with call_id {message.get('tool_call_id')}.",
                "input",
            )


def assistant_turn(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A response's output as the chat messages that continue a conversation: its text and its calls (a custom
    tool's as the function it was offered as), one assistant turn, with the reasoning blocks of its own reasoning
    items (a kept conversation carries them as a stateless client's items do)."""
    output = [item for item in response.get("output") or [] if isinstance(item, dict)]
    text = "".join(
        str(part.get("text", ""))
        for item in output
        if item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    )
    calls = [
        {"id": item.get("call_id"), "type": "function",
         "function": {"name": item.get("name"),
                      "arguments": item.get("arguments") or "{}" if item.get("type") == "function_call"
                      else custom_tools.arguments(str(item.get("input") or ""))}}
        for item in output
        if item.get("type") in ("function_call", "custom_tool_call")
    ]  # fmt: skip
    blocks = [
        b for item in output if item.get("type") == "reasoning" for b in reasoning_items.opened(item) or []
    ]
    if not text and not calls:
        return []
    turn: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        turn["tool_calls"] = calls
    if blocks:
        turn["reasoning_blocks"] = blocks
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


def message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}  # fmt: skip


def call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}  # fmt: skip


def custom_call_item(item_id: str, call_id: str, name: str, text: str, status: str) -> dict[str, Any]:
    """A custom tool's call (openai-python 3.57 `ResponseCustomToolCall`): its input the freeform text."""
    return {"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": name,
            "input": text, "status": status}  # fmt: skip


def finish_response(shell: dict[str, Any], finish: Any) -> None:
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
    # The provider's reasoning, first, as the model wrote it: its blocks, and its visible thinking as the summary
    # when the client asked for one (as the stream's summary deltas carry it).
    blocks = [b for b in said.get("reasoning_blocks") or [] if isinstance(b, dict)]
    thought = said.get("reasoning_content") if isinstance(said.get("reasoning_content"), str) else ""
    text = (thought or reasoning_items.summary_text(blocks)) if reasoning_items.summarized(body) else ""
    if blocks or text:
        output.append(reasoning_items.item(blocks, reasoning_items.new_id(), text))
    if isinstance(said.get("content"), str) and said["content"]:
        output.append(message_item(new_id("msg"), said["content"], "completed"))
    custom = custom_tools.names(body.get("tools"))
    for call in said.get("tool_calls") or []:
        function = call.get("function") or {} if isinstance(call, dict) else {}
        arguments = function.get("arguments")
        call_id, name = str(call.get("id") or new_id("call")), str(function.get("name"))
        if name in custom:
            text = custom_tools.input_of(arguments)
            output.append(custom_call_item(new_id("ctc"), call_id, name, text, "completed"))
            continue
        output.append(
            call_item(
                new_id("fc"),
                call_id,
                name,
                arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
                "completed",
            )
        )
    shell["output"] = output
    shell["usage"] = usage(completion.get("usage"))
    finish_response(shell, choice.get("finish_reason"))
    return shell
