"""Chat Completions → an OpenAI-compatible channel (pure): the body passes through with LYRouter's few changes,
and the answer's SSE events pass back unchanged, with an error event if the stream breaks (or, for Relay, are
read as chunks to be re-encoded).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from reference_gateway.errors import GatewayError, server_error
from reference_gateway.jsonorder import canonical_json_text, compact_dumps
from reference_gateway.policy.models import Channel, ModelInfo
from reference_gateway.policy.vocabulary import Profile, ProviderReasoning
from reference_gateway.sse import ServerSentEvent
from reference_gateway.translate.chunks import DONE, StreamItem

_NO_CHANGES: Final = ProviderReasoning(frozenset())
DONE_EVENT: Final = b"data: [DONE]\n\n"


@dataclass(frozen=True)
class PassthroughRequest:
    body: dict[str, Any]
    stream: bool


def _check_images(messages: Any, model: ModelInfo, profile: Profile) -> None:
    """LYRouter: "text-only models return 400 This model accepts text input only"."""
    if model.vision or not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for j, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and part.get("type") in ("image_url", "image"):
                raise profile.requests.images_unsupported.error(path=f"messages[{i}].content[{j}]")


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def _tool_call(call: Any) -> Any:
    """A history tool call whose `arguments` JSON is re-encoded in canonical key order (LYRouter: "including JSON
    inside tool call argument strings")."""
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return call
    arguments = call["function"].get("arguments")
    if not isinstance(arguments, str):
        return call
    return {**call, "function": {**call["function"], "arguments": canonical_json_text(arguments)}}


def _message(message: Any, profile: Profile) -> Any:
    if not isinstance(message, dict):
        return message
    policy = profile.passthrough
    # LYRouter: "removes reasoning_content, reasoning_blocks and cache_control from messages".
    out = {k: v for k, v in message.items() if k not in policy.message_fields_removed}
    if policy.strip_cache_control and isinstance(out.get("content"), list):
        out["content"] = _without_cache_control(out["content"])
    if profile.canonical_json and isinstance(out.get("tool_calls"), list):
        out["tool_calls"] = [_tool_call(c) for c in out["tool_calls"]]
    return out


def without_reasoning_blocks(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body with every message's `reasoning_blocks` left out (a bridge's: another family's reasoning)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return dict(body)
    kept = [
        {k: v for k, v in m.items() if k != "reasoning_blocks"} if isinstance(m, dict) else m
        for m in messages
    ]
    return {**body, "messages": kept}


def _forces_tool(choice: Any) -> bool:
    return choice == "required" or (isinstance(choice, dict) and choice.get("type") == "function")


def chat_to_openai(
    body: Mapping[str, Any], *, profile: Profile, model: ModelInfo, channel: Channel
) -> PassthroughRequest:
    """The body for `channel`: every field forwarded unchanged (LYRouter: "Other parameters not listed in the
    table are forwarded unchanged to OpenAI-compatible channels"), except the upstream model id, the forced
    `stream_options`, the provider's reasoning row, and the extension fields and cache markers in history."""
    _check_images(body.get("messages"), model, profile)
    reasoning = profile.passthrough.providers.get(channel.provider, _NO_CHANGES)
    out: dict[str, Any] = {k: v for k, v in body.items() if k not in reasoning.removed}
    out["model"] = channel.upstream
    stream = body.get("stream") is True
    if stream and profile.always_stream_usage:
        # LYRouter: "the gateway always sets it to {"include_usage": true} ... any value you pass is overwritten".
        out["stream_options"] = {"include_usage": True}
    if (
        reasoning.thinking_off_when_forced
        and _forces_tool(body.get("tool_choice"))
        and "enable_thinking" not in body
        and "thinking_budget" not in body
    ):
        # LYRouter: DashScope "automatically get enable_thinking: false" for a forced tool call.
        out["enable_thinking"] = False
    if isinstance(body.get("messages"), list):
        out["messages"] = [_message(m, profile) for m in body["messages"]]
    if profile.passthrough.strip_cache_control and isinstance(body.get("tools"), list):
        out["tools"] = _without_cache_control(body["tools"])
    return PassthroughRequest(out, stream)


class _OpenAIStream:
    """What both readings of an OpenAI-compatible stream share: `[DONE]` ends it, nothing is sent after the end."""

    _done: StreamItem

    def __init__(self) -> None:
        self._finished = False

    @property
    def finished(self) -> bool:
        return self._finished

    def feed(self, event: ServerSentEvent) -> list[StreamItem]:
        if self._finished:
            return []
        if event.data.strip() == DONE:
            self._finished = True
            return [self._done]
        return self._event(event.data)

    def _event(self, data: str) -> list[StreamItem]:
        raise NotImplementedError


class PassthroughStream(_OpenAIStream):
    """Feed the upstream's SSE events; each call returns the events' bytes to send. Events pass unchanged
    (`data:` lines only); `[DONE]` ends the stream. A stream that breaks before `[DONE]` ends with one error
    event (the profile's stream-error code) and, per the profile, `[DONE]`."""

    _done = DONE_EVENT

    def __init__(self, profile: Profile) -> None:
        super().__init__()
        self._profile = profile
        self._upstream_error = False

    def _event(self, data: str) -> list[StreamItem]:
        if data.lstrip().startswith('{"error"'):
            self._upstream_error = True  # the upstream's own error event, forwarded as it is
        return [b"data: " + data.encode() + b"\n\n"]

    def fail(self, error: GatewayError) -> list[StreamItem]:
        if self._finished:
            return []
        self._finished = True
        obj: dict[str, Any] = dict(error.to_object())
        if self._profile.stream_error_code is not None:
            obj["code"] = self._profile.stream_error_code
        items: list[StreamItem] = [b"data: " + compact_dumps({"error": obj}).encode() + b"\n\n"]
        if self._profile.stream_error == "error_then_done":
            items.append(DONE_EVENT)
        return items

    def end_of_stream(self) -> list[StreamItem]:
        """The upstream closed the stream without `[DONE]`: incomplete, unless it already sent its own error."""
        if self._upstream_error:
            self._finished = True
            return []
        return self.fail(server_error("The upstream stream ended before the answer was complete."))


class OpenAIChunks(_OpenAIStream):
    """The same events as chunks, for a flow that re-encodes them (Relay): each `data:` JSON object as it is,
    [DONE] as the end; the provider's own `{"error": …}` event ends the stream as an error. A stream that
    closes without [DONE] is incomplete (an error)."""

    _done = DONE

    def _event(self, data: str) -> list[StreamItem]:
        try:
            chunk = json.loads(data)
        except ValueError:
            return self.fail(server_error("The upstream provider sent a malformed stream event."))
        if not isinstance(chunk, dict):
            return []
        if isinstance(chunk.get("error"), Mapping):
            error = chunk["error"]
            message = (
                error.get("message") if isinstance(error.get("message"), str) else "The provider failed."
            )
            code = error.get("code") if isinstance(error.get("code"), str) else None
            return self.fail(GatewayError(502, message, type="server_error", code=code))
        return [chunk]

    def fail(self, error: GatewayError) -> list[StreamItem]:
        if self._finished:
            return []
        self._finished = True
        return [error.to_envelope()]

    def end_of_stream(self) -> list[StreamItem]:
        return self.fail(server_error("The upstream stream ended before the answer was complete."))
