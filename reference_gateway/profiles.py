"""Each documented gateway as data: what happens to every request field, the usage shape, the stream-error style.

The translators read a `Profile`; nothing in the code path asks which profile it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

Action = Literal["forward", "drop", "refuse"]
UsageShape = Literal["openai_cache_details", "upstream"]
StreamErrorStyle = Literal["error_then_done", "error_only"]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]


@dataclass(frozen=True)
class FieldPolicy:
    """What happens to one top-level request field.

    `forward`: the translator turns it into its Anthropic equivalent. `drop`: it never reaches the upstream.
    `refuse`: 400 with `message` unless the value is one of `accepted` (`n: 1`, `logprobs: false`); the
    error's `param` is the field path the message starts with.
    """

    action: Action
    message: str = ""
    accepted: tuple[object, ...] = (None,)

    @property
    def param(self) -> str:
        return self.message.split(":", 1)[0]


FORWARD = FieldPolicy("forward")
DROP = FieldPolicy("drop")


def refuse(message: str, *accepted: object) -> FieldPolicy:
    return FieldPolicy("refuse", message, (None, *accepted))


@dataclass(frozen=True)
class Effort:
    """One row of a `reasoning_effort` table: the upstream effort level and whether thinking is requested."""

    effort: str
    thinking: bool


@dataclass(frozen=True)
class Messages:
    """Refusal messages for nested parts of a request. `{path}` is the JSON path of the refused part;
    a `None` message means the part is dropped silently instead."""

    function_role: str | None
    input_audio_part: str | None
    file_id_part: str | None
    non_function_tool: str | None
    json_object_format: str | None
    unknown_reasoning_effort: str | None
    effort_unavailable: str | None
    forced_tool_unavailable: str | None
    prompt_cache_key_too_long: str
    no_user_message: str
    images_unsupported: str


@dataclass(frozen=True)
class Profile:
    name: str
    fields: Mapping[str, FieldPolicy]
    unknown_field: FieldPolicy
    messages: Messages
    reasoning_efforts: Mapping[str, Effort]
    finish_reasons: Mapping[str, FinishReason]
    usage_shape: UsageShape
    stream_error: StreamErrorStyle
    always_stream_usage: bool
    default_max_tokens: int
    auto_cache: bool
    cache_off_header: str | None
    session_header: str | None
    prompt_cache_key_max: int
    base_paths: tuple[str, ...] = field(default=("/v1", "/openai/v1"))


# EZAT "Ignored and refused fields": the refusal table, message for message.
_EZAT_REFUSED: dict[str, FieldPolicy] = {
    "n": refuse("n: only 1 choice per request is supported", 1),
    "logprobs": refuse("logprobs: log probabilities are not available", False),
    "top_logprobs": refuse("top_logprobs: log probabilities are not available"),
    "logit_bias": refuse("logit_bias: is not supported", {}),
    "audio": refuse("modalities: only text output is supported"),
    "modalities": refuse("modalities: only text output is supported", ["text"]),
    "web_search_options": refuse("web_search_options: is not supported"),
    "functions": refuse("functions: the legacy functions API is not supported; use tools"),
    "function_call": refuse("functions: the legacy functions API is not supported; use tools"),
}

# Fields the translator understands; each becomes its Anthropic equivalent (EZAT sections Messages .. Prompt caching).
_TRANSLATED = (
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",
    "prompt_cache_key",
)

# Stop reasons in the installed Anthropic SDK (wire reference 1.6) → OpenAI finish reasons.
# pause_turn has no OpenAI equivalent; the turn ended without a limit or a tool call, so `stop` (a reading).
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

# EZAT "Reasoning": the effort table.
_EZAT_EFFORTS: dict[str, Effort] = {
    "none": Effort("low", thinking=False),
    "minimal": Effort("low", thinking=False),
    "low": Effort("low", thinking=True),
    "medium": Effort("medium", thinking=True),
    "high": Effort("high", thinking=True),
    "xhigh": Effort("xhigh", thinking=True),
    "max": Effort("max", thinking=True),
}

# Readings where the EZAT doc is silent (the conformance rules assume the same):
# - refusals are 400 invalid_request_error, code null, `param` = the field path the message starts with;
#   `reasoning_effort: xhigh` on a model without it and a forced tool choice on a model that refuses it are
#   refusals too (messages below); all are raised before any upstream call, also for `stream: true`.
# - pause_turn → stop (the turn ended without hitting a limit or calling a client tool).
# - system and developer texts are joined with a blank line into one system text block (a client's
#   cache_control on a system part ends a block, so that breakpoint stays where the client put it).
# - prompt_cache_key / x-ezat-session only choose a deployment; with one upstream they select nothing and are
#   never sent upstream. A key over 256 characters is a 400.
# - an upstream 401 means the gateway's own key was refused: 500 server_error, never the client's 401.
# - a model without effort levels (claude-haiku-3-5) accepts reasoning_effort none/minimal and sends nothing.
EZAT = Profile(
    name="ezat",
    fields=MappingProxyType({**{name: FORWARD for name in _TRANSLATED}, **_EZAT_REFUSED}),
    # EZAT: "user, seed, presence_penalty, ... and any field not described on this page" never reach the model.
    unknown_field=DROP,
    messages=Messages(
        function_role='{path}: the legacy "function" role is not supported; use tools',
        input_audio_part="{path}: audio input is not supported",
        file_id_part="{path}: send the PDF as file_data (a base64 data URL); file_id is not supported",
        non_function_tool="{path}: only function tools are supported",
        json_object_format=(
            'response_format: type "json_object" is not supported; use "json_schema" with a schema '
            '(objects need "additionalProperties": false)'
        ),
        unknown_reasoning_effort="reasoning_effort: use one of none, minimal, low, medium, high, xhigh, max",
        effort_unavailable="reasoning_effort: {value} is not available for this model; use one of {levels}",
        forced_tool_unavailable='tool_choice: this model does not accept a forced tool choice; use "auto"',
        prompt_cache_key_too_long="prompt_cache_key: must be at most {max} characters",
        no_user_message="messages: must contain at least one user message",
        images_unsupported="{path}: this model does not accept images",
    ),
    reasoning_efforts=MappingProxyType(_EZAT_EFFORTS),
    finish_reasons=MappingProxyType(_FINISH),
    usage_shape="openai_cache_details",
    # EZAT Streaming: "you get data: {"error": {…}} and then data: [DONE], with no usage chunk".
    stream_error="error_then_done",
    always_stream_usage=False,
    # EZAT: "With neither, the limit is 32,000 tokens, or the model's maximum output if that is lower."
    default_max_tokens=32000,
    auto_cache=True,
    cache_off_header="x-ezat-cache",
    session_header="x-ezat-session",
    prompt_cache_key_max=256,
)

PROFILES: Mapping[str, Profile] = MappingProxyType({"ezat": EZAT})


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
