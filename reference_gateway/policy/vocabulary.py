"""The vocabulary of a gateway's policy (pure data): what happens to every request field, how a request is read,
the Anthropic and OpenAI-compatible conversions, the usage shape, the stream-error style, Relay's additions.

`Profile`'s defaults are the sub-objects the documented gateways share; `profiles.py` defines each gateway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from reference_gateway.errors import ErrorType, GatewayError, echo
from reference_gateway.policy.keys import KeyLimits

Action = Literal["forward", "drop", "refuse"]
UsageShape = Literal["openai_cache_details", "upstream", "relay"]
StreamErrorStyle = Literal["error_then_done", "error_only"]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
# Upstream failures: `translate` maps them to the profile's own errors; `forward` passes status and body on
# unchanged (connection failures and timeouts become an HTML page).
UpstreamErrorStyle = Literal["translate", "forward"]
# Provider kinds of OpenAI-compatible channels (LYRouter "Reasoning parameters", one row each).
ProviderKind = Literal["openai", "dashscope", "deepseek", "other"]


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
    a `None` message (the default) means the part is dropped silently instead."""

    function_role: str | None = None
    input_audio_part: str | None = None
    file_id_part: str | None = None
    non_function_tool: str | None = None
    json_object_format: str | None = None
    unknown_reasoning_effort: str | None = None
    effort_unavailable: str | None = None
    forced_tool_unavailable: str | None = None
    prompt_cache_key_too_long: str = "prompt_cache_key: must be at most {max} characters"
    no_user_message: str = "messages: must contain at least one user message"
    # EZAT: "Objects in the schema need "additionalProperties": false" - refused (`{path}`: the open object)
    # when set; None forwards the schema as it came.
    open_schema_object: str | None = None


@dataclass(frozen=True)
class ErrorSpec:
    """One gateway-made error: status, envelope fields; `{name}` placeholders filled by `error(**values)`.
    `param` is a field name, or `{path}` for the JSON path of the offending part."""

    status: int
    message: str
    type: ErrorType = "invalid_request_error"
    code: str | None = None
    param: str | None = None

    def error(self, **values: str) -> GatewayError:
        param = self.param.format(**values) if self.param is not None else None
        echoed = {name: echo(value) for name, value in values.items()}
        return GatewayError(
            self.status, self.message.format(**echoed), type=self.type, code=self.code, param=param
        )


@dataclass(frozen=True)
class Requests:
    """How the HTTP layer reads a request before translation: keys, content type, body, model."""

    # `Bearer` matched exactly (LYRouter) or in any case (EZAT).
    bearer_case_sensitive: bool
    # With both headers present, only `Authorization` is read (LYRouter) instead of falling back to x-api-key.
    authorization_only: bool
    # A Content-Type other than application/json: 400 with this one line of plain text (`{value}` = the header),
    # labelled application/json; None accepts any content type.
    unsupported_content_type: str | None
    invalid_json: ErrorSpec
    not_an_object: ErrorSpec
    # With a workspace default model, a body that is not a JSON object gets this flat `{"message": …}` body
    # instead (`{error}` = the parser's message); None keeps the errors above.
    invalid_json_with_default: str | None
    missing_model: ErrorSpec
    unknown_model: ErrorSpec  # `{model}`
    model_not_enabled: ErrorSpec
    unsupported_api: ErrorSpec
    images_unsupported: ErrorSpec  # `{path}`


@dataclass(frozen=True)
class ProviderReasoning:
    """One row of LYRouter's reasoning-parameter table for an OpenAI-compatible provider: the reasoning fields
    removed before forwarding, and whether a forced tool choice without thinking fields gets
    `enable_thinking: false`."""

    removed: frozenset[str]
    thinking_off_when_forced: bool = False


@dataclass(frozen=True)
class Passthrough:
    """OpenAI-compatible channels: what is removed from the forwarded body."""

    providers: Mapping[str, ProviderReasoning]
    # LYRouter: "removes reasoning_content, reasoning_blocks and cache_control from messages".
    message_fields_removed: frozenset[str]
    # LYRouter: "For OpenAI-compatible channels, all markers are removed".
    strip_cache_control: bool


@dataclass(frozen=True)
class AnthropicChannel:
    """Anthropic-protocol channels: the parts of the conversion where the two profiles differ."""

    # Which of max_tokens / max_completion_tokens wins when both are sent (first present wins).
    limit_fields: tuple[str, ...]
    # The default is capped at the model's maximum output (EZAT) or sent as is (LYRouter).
    cap_default_to_model: bool
    # temperature/top_p: only for models with capabilities.sampling, temperature capped at 1 (EZAT: "capped"),
    # or forwarded as sent (LYRouter: "the gateway does not rescale it").
    sampling_by_capability: bool
    # `metadata` keeps only these keys (LYRouter: "metadata keeps only user_id"); None: metadata is not sent.
    metadata_keys: tuple[str, ...] | None
    # Content parts other than text, image_url, file, input_audio: refused (400) or dropped silently.
    drop_unknown_parts: bool
    # `file` parts: converted to `document` blocks, or dropped (LYRouter: only text and image blocks).
    convert_files: bool
    # http(s) image URLs: passed on as Anthropic's url source (LYRouter), or downloaded and inlined (EZAT).
    image_url_source: bool
    # Data URLs: their base64 is decoded and the media type checked before anything is sent (EZAT), or the
    # data is passed on as it is and the upstream judges it (LYRouter).
    check_image_data: bool
    # cache_control on image parts is kept (EZAT) or dropped (LYRouter: "markers on text content blocks and
    # tool definitions are kept").
    cache_control_on_images: bool
    # The `anthropic-beta` value that a `ttl: "1h"` breakpoint needs, replacing the client's; None: never set.
    one_hour_cache_beta: str | None
    # Client headers forwarded to the upstream as they are.
    forwarded_headers: tuple[str, ...]
    # Thinking blocks are returned as reasoning_content / reasoning_blocks and accepted back in history.
    reasoning_output: bool
    # The answer's `id` and `model` are the upstream's (LYRouter) or the gateway's id and the requested name.
    upstream_identity: bool
    # With sampling forwarded as sent: a temperature above Anthropic's 1 is sent as 1 (Relay: its doc is silent, and
    # OpenAI's 0-2 would make Anthropic refuse a valid request; openai/request/temperature-in-range), or as sent
    # (LYRouter: "the gateway does not rescale it").
    cap_temperature: bool = False


@dataclass(frozen=True)
class Relay:
    """What only Relay does: one endpoint over three provider families with fallback chains, observability
    headers, per-model cost, an image limit checked before routing, the idempotency store and the response cache.
    """

    # "Response headers include X-Relay-Request-Id, X-Relay-Trace-Id, X-Relay-Observation-Id", on every answer.
    request_id_header: str
    trace_id_header: str
    observation_id_header: str
    # "on non-streaming calls only, X-Relay-Cost-Usd".
    cost_header: str
    # "Each image is limited to Gateway:MaxImageBytes decoded bytes (default 5 MB)".
    max_image_bytes: int
    # "transient retry": attempts of one model after a transient failure, before the next model of the chain.
    transient_retries: int
    # "Provide an Idempotency-Key header ... a repeat within 24 hours returns the stored response".
    idempotency_header: str
    idempotency_ttl_seconds: float
    replayed_header: str
    # "Bypass per request with X-Relay-Cache: no (also false or bypass); the response says HIT or MISS".
    cache_header: str
    cache_bypass_values: frozenset[str]
    # The `code` of a mid-stream error line when the error has none of its own.
    stream_error_default_code: str
    # Relay-only request fields, never sent to an OpenAI-compatible provider.
    relay_fields: frozenset[str]


# Stop reasons in the installed Anthropic SDK (wire reference 1.6) → OpenAI finish reasons.
# pause_turn has no OpenAI equivalent; the turn ended without a limit or a tool call, so `stop` (a reading).
_FINISH: Mapping[str, FinishReason] = MappingProxyType(
    {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "pause_turn": "stop",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "tool_use": "tool_calls",
        "refusal": "content_filter",
    }
)

# LYRouter and Relay refuse none of the nested parts EZAT refuses: each is dropped silently.
SILENT_DROPS = Messages()

# OpenAI-compatible channels without a provider table: only the cache markers are removed (EZAT has no such
# channels; Relay: "a string stays a string and parts stay parts on the way to an OpenAI-compatible provider").
_PLAIN_PASSTHROUGH = Passthrough(
    providers=MappingProxyType({}), message_fields_removed=frozenset(), strip_cache_control=True
)

# The transient upstream statuses after which LYRouter and Relay try the next channel or model.
_TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})

_NO_EFFORTS: Mapping[str, Effort] = MappingProxyType({})


@dataclass(frozen=True)
class Profile:
    """One gateway's policy. The defaults are what the profiles share (most of it LYRouter's and Relay's);
    each profile states only where it differs."""

    name: str
    fields: Mapping[str, FieldPolicy]
    messages: Messages
    usage_shape: UsageShape
    requests: Requests
    anthropic: AnthropicChannel
    # Fields not in `fields`: every profile drops them (EZAT: "user, seed, presence_penalty, ... and any field not
    # described on this page" never reach the model).
    unknown_field: FieldPolicy = DROP
    # (Mappings are not hashable, so a dataclass takes them only through a factory; every profile gets the
    # same read-only table.)
    reasoning_efforts: Mapping[str, Effort] = field(default_factory=lambda: _NO_EFFORTS)
    finish_reasons: Mapping[str, FinishReason] = field(default_factory=lambda: _FINISH)
    stream_error: StreamErrorStyle = "error_only"
    always_stream_usage: bool = False
    default_max_tokens: int = 4096
    auto_cache: bool = False
    cache_off_header: str | None = None
    session_header: str | None = None
    prompt_cache_key_max: int = 256
    passthrough: Passthrough = _PLAIN_PASSTHROUGH
    upstream_errors: UpstreamErrorStyle = "translate"
    # The `code` of every error event after a stream started (LYRouter: `stream_interrupted`); None keeps
    # the error's own code.
    stream_error_code: str | None = None
    # The upstream body is sent with sorted keys and 14 significant digits (LYRouter "Fixed JSON key order",
    # "Number precision"), or compact as built.
    canonical_json: bool = False
    # Upstream statuses after which the next channel of the model is tried (before the first streamed byte);
    # connection failures and timeouts always move on.
    fallback_statuses: frozenset[int] = _TRANSIENT_STATUSES
    # An upstream stream counts as started at its first event, not at its response headers: a connection that
    # fails before that event is an HTTP error and the next channel may be tried (LYRouter: "Once streaming
    # output has started, the gateway no longer switches channels").
    wait_for_first_event: bool = True
    # The catalog shipped for this profile (package resource name).
    catalog: str = "models.yaml"
    base_paths: tuple[str, ...] = field(default=("/v1", "/openai/v1"))
    # Relay's own behaviour (None for the other profiles).
    relay: Relay | None = None
    # The gateway's own refusals of a client key: its rate limit, a spent budget (issue 45; policy/keys.py).
    key_limits: KeyLimits = field(default_factory=KeyLimits)
