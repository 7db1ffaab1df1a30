"""A summary of the answer the replay upstream served: text, ids, stop reason, final usage, tool uses.

Reads Anthropic Messages JSON or SSE, OpenAI-compatible JSON or SSE (pass-through channels), Gemini
`GenerateContentResponse` JSON or `alt=sse` events, and OpenAI Responses (a Response object, or its events).
Usage is normalised to Anthropic's meaning, so the same usage rules hold for both kinds of channel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from harness.exchange import Exchange, ServedAnswer
from harness.surfaces import reading
from harness.surfaces.chat_completions import reading as chat

# The usage names rules may use; a missing one counts 0 (specs/README.md, "Usage math").
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "thinking_tokens",
)


@dataclass(frozen=True)
class ToolUse:
    id: str | None
    name: str | None
    arguments: str  # the input as a JSON string (compact when it parses)
    # A streamed OpenAI-family call: its `function.arguments` fragments in the order the provider sent them (a
    # Responses custom tool call: its input deltas).
    fragments: tuple[str, ...] = ()
    # A Responses custom tool call's freeform `input` (its `arguments` read as `{"input": <input>}`, the form a
    # gateway that offers a custom tool as a function taking its text gets back from another family).
    custom_input: str | None = None

    @property
    def text(self) -> str | None:
        """The call's freeform text: a custom tool call's input, or the lone string argument `input` of a call
        whose arguments are `{"input": <string>}`; None otherwise."""
        if self.custom_input is not None:
            return self.custom_input
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return None
        if isinstance(value, dict) and list(value) == ["input"] and isinstance(value["input"], str):
            return value["input"]
        return None


@dataclass(frozen=True)
class UpstreamAnswer:
    format: str  # "anthropic" | "openai" | "gemini" | "responses"
    stream: bool
    text: str = ""
    id: str | None = None
    model: str | None = None
    stop_reason: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)  # the five USAGE_FIELDS, missing = 0
    raw_usage: Mapping[str, Any] = field(default_factory=dict)  # the final usage object as served
    tool_uses: tuple[ToolUse, ...] = ()
    thinking: str = ""
    # The thinking blocks' signatures joined (Anthropic); reasoning items' encrypted_content (Responses); the parts'
    # thoughtSignature values (Gemini).
    signature: str = ""
    # Anthropic: the thinking and redacted_thinking blocks whole, in order (a stream's assembled from its deltas):
    # what the next turn must send back unchanged.
    thinking_blocks: tuple[Mapping[str, Any], ...] = ()


def last_served(exchange: Exchange) -> ServedAnswer | None:
    """The answer to the last upstream call of this case, if any was observed."""
    if not exchange.upstream:
        return None
    return exchange.upstream[-1].served


def summarize(served: ServedAnswer) -> UpstreamAnswer | None:
    """Summarise a served answer; None when it is neither a message nor a completion (e.g. an error body)."""
    is_sse = "text/event-stream" in served.headers.get("content-type", "") or served.body.lstrip().startswith(
        (b"event:", b"data:")
    )
    if is_sse:
        view = reading.stream_view(served.body, chat.DONE)
        objects = [p.json for p in view.payloads if p.is_object]
        if any(isinstance(o.get("type"), str) and o["type"].startswith("message_") for o in objects):
            return _anthropic_stream(objects)
        if objects and all(isinstance(o.get("candidates"), list) for o in objects):
            return _gemini(objects, stream=True)
        if any(isinstance(o.get("type"), str) and o["type"].startswith("response.") for o in objects):
            return _responses_stream(objects)
        chunks = chat.completion_chunks(view)
        if not chunks:
            return None
        summary = _openai(chat.assemble(chunks), stream=True)
        pieces = _argument_fragments(chunks)
        tools = tuple(
            replace(tool, fragments=tuple(pieces.get(i, ()))) for i, tool in enumerate(summary.tool_uses)
        )
        return replace(summary, tool_uses=tools)
    parsed = reading.parse_json(served.body)
    if not parsed.ok or not isinstance(parsed.value, dict):
        return None
    body = parsed.value
    if body.get("type") == "message":
        return _anthropic_message(body)
    if isinstance(body.get("choices"), list):
        return _openai(body, stream=False)
    if isinstance(body.get("candidates"), list):
        return _gemini([body], stream=False)
    if body.get("object") == "response":
        return _responses(body, stream=False)
    return None


def _argument_fragments(chunks: Any) -> dict[int, list[str]]:
    """Each call's `function.arguments` strings of the first choice, by the call's position (its order of
    first appearance), as the provider streamed them."""
    order: dict[Any, int] = {}
    out: dict[int, list[str]] = {}
    for chunk in chunks:
        choice = reading.as_object(chat.first_choice(chunk))
        delta = reading.as_object(choice.get("delta"))
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            call = reading.as_object(call)
            position = order.setdefault(call.get("index"), len(order))
            arguments = reading.as_object(call.get("function")).get("arguments")
            if isinstance(arguments, str):
                out.setdefault(position, []).append(arguments)
    return out


def _ints(usage: Any) -> dict[str, int]:
    """The five usage fields from an Anthropic usage object; nulls and garbage count 0."""
    if not isinstance(usage, Mapping):
        return dict.fromkeys(USAGE_FIELDS, 0)
    out = {name: _int(usage.get(name)) for name in USAGE_FIELDS[:4]}
    details = usage.get("output_tokens_details")
    out["thinking_tokens"] = _int(details.get("thinking_tokens")) if isinstance(details, Mapping) else 0
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _anthropic_message(body: Mapping[str, Any]) -> UpstreamAnswer:
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    blocks: list[Mapping[str, Any]] = []
    tools: list[ToolUse] = []
    for block in body.get("content") or []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            text.append(block["text"])
        elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
            thinking.append(block["thinking"])
            signatures.append(str(block.get("signature") or ""))
        elif block.get("type") == "tool_use":
            tools.append(ToolUse(block.get("id"), block.get("name"), _compact(block.get("input", {}))))
        if block.get("type") in ("thinking", "redacted_thinking"):
            blocks.append(dict(block))
    usage = body.get("usage")
    return UpstreamAnswer(
        format="anthropic",
        stream=False,
        text="".join(text),
        id=body.get("id"),
        model=body.get("model"),
        stop_reason=body.get("stop_reason"),
        usage=_ints(usage),
        raw_usage=dict(usage) if isinstance(usage, Mapping) else {},
        tool_uses=tuple(tools),
        thinking="".join(thinking),
        signature="".join(signatures),
        thinking_blocks=tuple(blocks),
    )


def _anthropic_stream(events: list[dict[str, Any]]) -> UpstreamAnswer:
    message: Mapping[str, Any] = {}
    usage: dict[str, Any] = {}
    stop_reason = None
    blocks: dict[Any, dict[str, Any]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), Mapping):
            message = event["message"]
            if isinstance(message.get("usage"), Mapping):
                usage.update(message["usage"])
        elif kind == "content_block_start" and isinstance(event.get("content_block"), Mapping):
            start = event["content_block"]
            blocks[event.get("index")] = {"start": start, "parts": []}
        elif kind == "content_block_delta" and isinstance(event.get("delta"), Mapping):
            block = blocks.setdefault(event.get("index"), {"start": {}, "parts": []})
            block["parts"].append(event["delta"])
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping) and delta.get("stop_reason") is not None:
                stop_reason = delta["stop_reason"]
            # message_delta usage is cumulative: later non-null values replace earlier ones.
            if isinstance(event.get("usage"), Mapping):
                usage.update({k: v for k, v in event["usage"].items() if v is not None})
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    whole: list[Mapping[str, Any]] = []
    tools: list[ToolUse] = []
    for block in blocks.values():
        start, parts = block["start"], block["parts"]
        if start.get("type") == "text":
            text.append(start.get("text") or "")
            text.extend(p.get("text", "") for p in parts if p.get("type") == "text_delta")
        elif start.get("type") == "thinking":
            said = [p.get("thinking", "") for p in parts if p.get("type") == "thinking_delta"]
            signed = [p.get("signature", "") for p in parts if p.get("type") == "signature_delta"]
            thinking.extend(said)
            signatures.extend(signed)
            whole.append({
                "type": "thinking",
                "thinking": str(start.get("thinking") or "") + "".join(t for t in said if isinstance(t, str)),
                "signature": str(start.get("signature") or "") + "".join(t for t in signed if isinstance(t, str)),
            })  # fmt: skip
        elif start.get("type") == "redacted_thinking":
            whole.append(dict(start))
        elif start.get("type") == "tool_use":
            joined = "".join(p.get("partial_json", "") for p in parts if p.get("type") == "input_json_delta")
            parsed = reading.parse_json(joined) if joined else reading.Parsed(True, start.get("input", {}))
            tools.append(
                ToolUse(start.get("id"), start.get("name"), _compact(parsed.value) if parsed.ok else joined)
            )
    return UpstreamAnswer(
        format="anthropic",
        stream=True,
        text="".join(t for t in text if isinstance(t, str)),
        id=message.get("id"),
        model=message.get("model"),
        stop_reason=stop_reason,
        usage=_ints(usage),
        raw_usage=usage,
        tool_uses=tuple(tools),
        thinking="".join(t for t in thinking if isinstance(t, str)),
        signature="".join(s for s in signatures if isinstance(s, str)),
        thinking_blocks=tuple(whole),
    )


def _openai(completion: Mapping[str, Any], *, stream: bool) -> UpstreamAnswer:
    choice = reading.as_object(chat.first_choice(completion))
    message = reading.as_object(choice.get("message"))
    tools: list[ToolUse] = []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            function = reading.as_object(call.get("function"))
            arguments = function.get("arguments")
            tools.append(
                ToolUse(
                    call.get("id"),
                    function.get("name"),
                    arguments if isinstance(arguments, str) else _compact(arguments),
                )
            )
    usage = completion.get("usage")
    thinking = message.get("reasoning_content", message.get("reasoning"))
    content = message.get("content")
    return UpstreamAnswer(
        format="openai",
        stream=stream,
        text=content if isinstance(content, str) else "",
        id=completion.get("id"),
        model=completion.get("model"),
        stop_reason=choice.get("finish_reason"),
        usage=_openai_usage(usage),
        raw_usage=dict(usage) if isinstance(usage, Mapping) else {},
        tool_uses=tuple(tools),
        thinking=thinking if isinstance(thinking, str) else "",
    )


def _openai_usage(usage: Any) -> dict[str, int]:
    """OpenAI usage in Anthropic terms: prompt_tokens = input + cache read + cache write."""
    if not isinstance(usage, Mapping):
        return dict.fromkeys(USAGE_FIELDS, 0)
    prompt = usage.get("prompt_tokens_details")
    prompt = prompt if isinstance(prompt, Mapping) else {}
    completion = usage.get("completion_tokens_details")
    completion = completion if isinstance(completion, Mapping) else {}
    cached = _int(prompt.get("cached_tokens"))
    written = _int(prompt.get("cache_write_tokens"))
    return {
        "input_tokens": _int(usage.get("prompt_tokens")) - cached - written,
        "output_tokens": _int(usage.get("completion_tokens")),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": written,
        "thinking_tokens": _int(completion.get("reasoning_tokens")),
    }


def _gemini(responses: list[Mapping[str, Any]], *, stream: bool) -> UpstreamAnswer:
    """One GenerateContentResponse, or a stream's events (each holding only its new parts; the last usage wins)."""
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    tools: list[ToolUse] = []
    stop_reason = None
    usage: Mapping[str, Any] = {}
    for response in responses:
        candidates = response.get("candidates") or []
        candidate = reading.as_object(candidates[0] if candidates else None)
        content = reading.as_object(candidate.get("content"))
        for part in content.get("parts") or []:
            if not isinstance(part, Mapping):
                continue
            if isinstance(part.get("thoughtSignature"), str):
                signatures.append(part["thoughtSignature"])
            if isinstance(part.get("text"), str):
                (thinking if part.get("thought") is True else text).append(part["text"])
            elif isinstance(part.get("functionCall"), Mapping):
                call = part["functionCall"]
                tools.append(ToolUse(call.get("id"), call.get("name"), _compact(call.get("args", {}))))
        if candidate.get("finishReason") is not None:
            stop_reason = candidate["finishReason"]
        if isinstance(response.get("usageMetadata"), Mapping):
            usage = response["usageMetadata"]
    last = responses[-1] if responses else {}
    return UpstreamAnswer(
        format="gemini",
        stream=stream,
        text="".join(text),
        id=last.get("responseId"),
        model=last.get("modelVersion"),
        stop_reason=stop_reason,
        usage=_gemini_usage(usage),
        raw_usage=dict(usage),
        tool_uses=tuple(tools),
        thinking="".join(thinking),
        signature="".join(signatures),
    )


def _gemini_usage(usage: Mapping[str, Any]) -> dict[str, int]:
    """usageMetadata in Anthropic terms: promptTokenCount includes cachedContentTokenCount; output includes thoughts."""
    cached = _int(usage.get("cachedContentTokenCount"))
    thoughts = _int(usage.get("thoughtsTokenCount"))
    return {
        "input_tokens": _int(usage.get("promptTokenCount")) - cached,
        "output_tokens": _int(usage.get("candidatesTokenCount")) + thoughts,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
        "thinking_tokens": thoughts,
    }


def _responses(
    response: Mapping[str, Any], *, stream: bool, fragments: Mapping[str, list[str]] | None = None
) -> UpstreamAnswer:
    """A Response object: its message items' output_text, its function_call items (call_id, name, arguments) and
    custom_tool_call items (call_id, name, input), its reasoning summaries; the stop reason is its status, or
    `incomplete:<reason>`."""
    text: list[str] = []
    thinking: list[str] = []
    sealed: list[str] = []
    tools: list[ToolUse] = []
    output = response.get("output")
    for item in output if isinstance(output, list) else []:
        item = reading.as_object(item)
        if item.get("type") == "message":
            for part in item.get("content") or []:
                part = reading.as_object(part)
                if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    text.append(part["text"])
        elif item.get("type") == "function_call":
            arguments = item.get("arguments")
            pieces = tuple((fragments or {}).get(str(item.get("id")), ()))
            tools.append(
                ToolUse(
                    item.get("call_id"),
                    item.get("name"),
                    arguments if isinstance(arguments, str) else _compact(arguments),
                    pieces,
                )
            )
        elif item.get("type") == "custom_tool_call":
            entered = item.get("input") if isinstance(item.get("input"), str) else ""
            pieces = tuple((fragments or {}).get(str(item.get("id")), ()))
            tools.append(
                ToolUse(item.get("call_id"), item.get("name"), _compact({"input": entered}), pieces, entered)
            )
        elif item.get("type") == "reasoning":
            if isinstance(item.get("encrypted_content"), str):
                sealed.append(item["encrypted_content"])
            for part in item.get("summary") or []:
                part = reading.as_object(part)
                if isinstance(part.get("text"), str):
                    thinking.append(part["text"])
    status = response.get("status")
    reason = reading.as_object(response.get("incomplete_details")).get("reason")
    usage = response.get("usage")
    return UpstreamAnswer(
        format="responses",
        stream=stream,
        text="".join(text),
        id=response.get("id"),
        model=response.get("model"),
        stop_reason=f"{status}:{reason}" if status == "incomplete" and reason else status,
        usage=_responses_usage(usage),
        raw_usage=dict(usage) if isinstance(usage, Mapping) else {},
        tool_uses=tuple(tools),
        thinking="".join(thinking),
        signature="".join(sealed),
    )


def _responses_stream(events: list[dict[str, Any]]) -> UpstreamAnswer | None:
    """A Responses stream: its terminal event's response, each call's argument (or custom input) deltas as they
    came."""
    final: Mapping[str, Any] | None = None
    fragments: dict[str, list[str]] = {}
    for event in events:
        kind = event.get("type")
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            final = reading.as_object(event.get("response"))
        elif kind in (
            "response.function_call_arguments.delta",
            "response.custom_tool_call_input.delta",
        ) and isinstance(event.get("delta"), str):
            fragments.setdefault(str(event.get("item_id")), []).append(event["delta"])
    if final is None:
        return None
    return _responses(final, stream=True, fragments=fragments)


def _responses_usage(usage: Any) -> dict[str, int]:
    """Responses usage in Anthropic terms: input_tokens includes input_tokens_details' cached_tokens and
    cache_write_tokens; output_tokens includes output_tokens_details.reasoning_tokens."""
    if not isinstance(usage, Mapping):
        return dict.fromkeys(USAGE_FIELDS, 0)
    details = reading.as_object(usage.get("input_tokens_details"))
    cached, written = _int(details.get("cached_tokens")), _int(details.get("cache_write_tokens"))
    return {
        "input_tokens": _int(usage.get("input_tokens")) - cached - written,
        "output_tokens": _int(usage.get("output_tokens")),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": written,
        "thinking_tokens": _int(
            reading.as_object(usage.get("output_tokens_details")).get("reasoning_tokens")
        ),
    }
