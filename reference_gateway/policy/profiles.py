"""Each documented gateway as data (EZAT, LYRouter, Relay), in the vocabulary of `policy.py`; each states only
where it differs from the shared defaults.

The translators read a `Profile`; nothing in the code path asks which profile it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from reference_gateway.policy.keys import KeyLimits
from reference_gateway.policy.vocabulary import (
    DROP,
    FORWARD,
    SILENT_DROPS,
    AnthropicChannel,
    Effort,
    ErrorSpec,
    FieldPolicy,
    Messages,
    Passthrough,
    Profile,
    ProviderReasoning,
    Relay,
    Requests,
    refuse,
)

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

# Fields the translator understands; each becomes its Anthropic equivalent (EZAT sections Messages .. Prompt
# caching). Relay's Anthropic translation reads the same, without reasoning_effort and prompt_cache_key.
_CORE_FIELDS = (
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
)
_CHAT_FIELDS = (*_CORE_FIELDS, "parallel_tool_calls", "response_format")
_TRANSLATED = (*_CHAT_FIELDS, "reasoning_effort", "prompt_cache_key")

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

_MODEL_NOT_FOUND = ErrorSpec(
    404,
    "The model `{model}` does not exist or you do not have access to it.",
    code="model_not_found",
    param="model",
)

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
        open_schema_object='{path}: objects in the schema need "additionalProperties": false',
    ),
    reasoning_efforts=MappingProxyType(_EZAT_EFFORTS),
    usage_shape="openai_cache_details",
    # EZAT Streaming: "you get data: {"error": {…}} and then data: [DONE], with no usage chunk".
    stream_error="error_then_done",
    # EZAT: "With neither, the limit is 32,000 tokens, or the model's maximum output if that is lower."
    default_max_tokens=32000,
    auto_cache=True,
    cache_off_header="x-ezat-cache",
    session_header="x-ezat-session",
    requests=Requests(
        bearer_case_sensitive=False,
        authorization_only=False,
        unsupported_content_type=None,
        invalid_json=ErrorSpec(400, "We could not parse the JSON body of your request."),
        not_an_object=ErrorSpec(400, "The request body must be a JSON object."),
        invalid_json_with_default=None,
        missing_model=ErrorSpec(400, "model: is required", param="model"),
        unknown_model=_MODEL_NOT_FOUND,
        # EZAT 403 row: "The key may not use this model".
        model_not_enabled=ErrorSpec(403, "The key may not use the model `{model}`.", "permission_error"),
        unsupported_api=_MODEL_NOT_FOUND,
        images_unsupported=ErrorSpec(400, "{path}: this model does not accept images", param="{path}"),
    ),
    anthropic=AnthropicChannel(
        limit_fields=("max_completion_tokens", "max_tokens"),
        cap_default_to_model=True,
        sampling_by_capability=True,
        metadata_keys=None,
        drop_unknown_parts=False,
        convert_files=True,
        image_url_source=False,
        check_image_data=True,
        cache_control_on_images=True,
        one_hour_cache_beta=None,
        forwarded_headers=(),
        reasoning_output=False,
        upstream_identity=False,
    ),
    fallback_statuses=frozenset({429, 500, 502, 503, 504, 529}),
    wait_for_first_event=False,
    # EZAT "Errors": 402 insufficient_quota "The balance is used up, or the key reached its spend limit"; 429
    # rate_limit_exceeded "Too many requests; wait for retry-after seconds" (the defaults of KeyLimits).
    key_limits=KeyLimits(),
)

# LYRouter "Gateway behavior": removed for Anthropic-protocol channels, silently.
_LYROUTER_REMOVED = (
    "response_format",
    "seed",
    "n",
    "logprobs",
    "top_logprobs",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "parallel_tool_calls",
    "reasoning_effort",
)
_LYROUTER_TRANSLATED = (*_CORE_FIELDS, "metadata", "enable_thinking", "thinking_budget")
_REASONING_FIELDS = ("reasoning_effort", "enable_thinking", "thinking_budget")

# Readings where the LYRouter doc is silent:
# - auth is checked before the content type; the content type before the body is read.
# - a non-JSON body (truncated, or not an object) with a default model gets the flat `{"message": …}` body
#   (the doc's invalid_json row); without one, 400 invalid_json.
# - a model id the catalog does not know is 503 no_route_candidate ("no channel can serve this request").
# - enable_thinking: false wins over a thinking_budget (the switch is off); a budget without the switch
#   enables thinking with that budget.
# - channels are tried in catalog order; the next one after a connection failure, a timeout, 429 or 5xx
#   (529 included) before the first streamed byte; the client gets the last channel's failure.
# - upstream errors are forwarded unchanged, Anthropic's envelope included ("the status code and error text
#   come from the upstream"); retry headers pass with them.
# - after a stream started, every failure is one error event with code `stream_interrupted` and no [DONE]
#   ("data: [DONE] marks a normal end").
# - stop reasons as in EZAT's table (pause_turn → stop, refusal → content_filter).
# - https image URLs go on as Anthropic url sources (nothing is downloaded); data URLs are split, not decoded:
#   the upstream judges the data. System and developer texts are joined with a blank line (as in EZAT).
# - an upstream stream starts at its first event: a connection that closes (or stays silent past the idle
#   timeout) before it is a 500 (504) HTML page, or the next channel; after it, `stream_interrupted`.
# - OpenAI-compatible channels: `stream_options` is forced only when streaming; the upstream's error events
#   inside a stream are passed on as they are; a stream cut short without [DONE] ends with stream_interrupted.
# - fixed key order = keys sorted by code point, at every level; numbers printed like C's %.14g.
LYROUTER = Profile(
    name="lyrouter",
    fields=MappingProxyType(
        {**{name: FORWARD for name in _LYROUTER_TRANSLATED}, **{name: DROP for name in _LYROUTER_REMOVED}}
    ),
    # Other fields: Anthropic has no equivalent (dropped); OpenAI-compatible channels forward every field (see
    # Passthrough). Stop reasons: "end_turn and stop_sequence map to stop, max_tokens maps to length, and
    # tool_use maps to tool_calls"; the rest as in EZAT (the shared table).
    messages=SILENT_DROPS,
    # LYRouter: prompt_tokens excludes cache hits and writes, which are reported beside it (non-streaming).
    usage_shape="upstream",
    # LYRouter: "For streaming requests the gateway always sets it to {"include_usage": true}".
    always_stream_usage=True,
    # LYRouter: "when the request has neither max_tokens nor max_completion_tokens, the gateway adds 4096".
    default_max_tokens=4096,
    requests=Requests(
        bearer_case_sensitive=True,
        authorization_only=True,
        unsupported_content_type="unsupported content-type: {value}",
        invalid_json=ErrorSpec(400, "request body must be a JSON object", code="invalid_json"),
        not_an_object=ErrorSpec(400, "request body must be a JSON object", code="invalid_json"),
        invalid_json_with_default="could not get parse JSON request body: {error}",
        missing_model=ErrorSpec(400, "you must provide a model parameter", code="missing_model"),
        unknown_model=ErrorSpec(503, "all routed candidates exhausted", "server_error", "no_route_candidate"),
        model_not_enabled=ErrorSpec(
            403, "Model is not available in the model plaza", "permission_error", "model_not_available"
        ),
        unsupported_api=ErrorSpec(
            400, "This model does not support the chat_completions API", code="unsupported_model_api"
        ),
        images_unsupported=ErrorSpec(
            400, "This model accepts text input only", code="unsupported_model_input"
        ),
    ),
    anthropic=AnthropicChannel(
        # LYRouter: max_completion_tokens "is used as max_tokens when max_tokens is absent".
        limit_fields=("max_tokens", "max_completion_tokens"),
        cap_default_to_model=False,
        sampling_by_capability=False,
        metadata_keys=("user_id",),
        drop_unknown_parts=True,
        convert_files=False,
        image_url_source=True,
        check_image_data=False,
        cache_control_on_images=False,
        one_hour_cache_beta="extended-cache-ttl-2025-04-11",
        forwarded_headers=("anthropic-beta",),
        reasoning_output=True,
        upstream_identity=True,
    ),
    passthrough=Passthrough(
        providers=MappingProxyType(
            {
                "openai": ProviderReasoning(frozenset({"enable_thinking", "thinking_budget"})),
                "dashscope": ProviderReasoning(
                    frozenset({"reasoning_effort"}), thinking_off_when_forced=True
                ),
                "deepseek": ProviderReasoning(frozenset(_REASONING_FIELDS)),
                "other": ProviderReasoning(frozenset()),
            }
        ),
        message_fields_removed=frozenset({"reasoning_content", "reasoning_blocks", "cache_control"}),
        strip_cache_control=True,
    ),
    upstream_errors="forward",
    stream_error_code="stream_interrupted",
    canonical_json=True,
    catalog="models-lyrouter.yaml",
    # LYRouter "429: rate limits and quotas": the key's own limit is a 429 rate_limit_error naming its subject
    # (apikey), metric and window; a key's spent quota is the same 429 (metric total_tokens, window day), which the
    # SDKs retry — so LYRouter's budget is not the `budget` feature's (not claimed).
    key_limits=KeyLimits(
        lyrouter_body=True,
        over_budget=(429, "rate limit exceeded on apikey total_tokens/day", "rate_limit_error", None),
        over_budget_headers={},
    ),
)

# Relay: fields its Anthropic translation reads (`user`, `output_config`, `anthropic_tools` are added by
# translate/relay.py); everything else is not sent to Anthropic.
_RELAY_TRANSLATED = _CHAT_FIELDS

# Readings where the Relay doc is silent (the conformance rules assume the same):
# - routing: a model has one channel; its fallback chain is the catalog's `fallbacks` list (not transitive).
#   A transient failure (connection, timeout, 408, 429, 5xx, 529) before the first streamed token is retried
#   once on the same model, then the next model of the chain is tried; other failures (400, 401, 404 ...) are
#   answered at once. The client gets the last model's failure. Fallback models without vision are skipped for
#   a request with images.
# - "after output has begun" = after the first chunk with text, a tool-call fragment or a finish reason; the
#   role-only first chunk is held back until then, so a stream that fails before it is retried or falls back.
# - the mid-stream error line is exactly {"error": {"message", "type", "code"}}; `code` is the error's own or
#   `provider_error`. No [DONE] after it. Every chunk drops null fields (at every level).
# - the usage-only chunk is shown when the client sent stream_options.include_usage: true; the OpenAI-compatible
#   provider always gets include_usage: true (other stream_options keys kept).
# - `user` → Anthropic metadata.user_id, forwarded unchanged to OpenAI-compatible providers, not sent to Gemini;
#   `metadata` (any JSON) is read for attribution and never sent anywhere.
# - images: only data URLs are measured before routing (the decoded base64 length); a malformed data URL, or a
#   scheme other than data/http(s), is invalid_image_url. http(s) images go to Anthropic as url sources and to
#   OpenAI-compatible providers unchanged; for Gemini the gateway downloads them (inlineData), the same limit
#   applying to the downloaded bytes. An image to a model without vision is 400 code image_not_supported.
# - PDF file parts to OpenAI-compatible providers are unchanged; to Anthropic a document block; to Gemini
#   inlineData with the data URL's media type. cache_control is removed before OpenAI-compatible and Gemini
#   providers (the parts themselves keep their shape).
# - Gemini: tool results that are a JSON object are sent as the functionResponse `response`, other text as
#   {"output": text}; a tool message must answer a call of an earlier assistant message (400 otherwise); the
#   minted ids are not sent back to Gemini; Gemini's own functionCall.id is kept when it sends one;
#   parallel_tool_calls has no Gemini equivalent and is ignored; finish reasons SAFETY-like → content_filter,
#   MAX_TOKENS → length, a function call → tool_calls, others → stop.
# - Anthropic: max_tokens defaults to 4096, capped at the model's maximum; temperature/top_p forwarded as sent, a
#   temperature above Anthropic's 1 sent as 1 (OpenAI's range is 0-2: a valid request is never refused for it);
#   reasoning_effort, n, logprobs and other fields without an Anthropic equivalent are not sent; output_config
#   is sent whole (a response_format json_schema fills output_config.format only when the client's has none).
# - relay_web_search is present on a non-streaming Anthropic answer whenever web_search_*/web_fetch_* tools
#   were forwarded: {"queries", "results", "citations", "answer", "errors", "requests", "paused"}; errors are
#   the error_code strings of failed tool results; requests = usage.server_tool_use.web_search_requests.
# - cost: (prompt - cached - cache_creation) * input + cached * cached + cache_creation * cache_write
#   + completion * output, per million, as a plain decimal string; a replayed or cached answer says 0.
# - idempotency: scoped by the client's key; only 200 answers are stored (a failed call can be retried with the
#   same key); the same key with a different body is 422 code idempotency_key_reused; a duplicate that arrives
#   while the first is in flight waits for its answer (at most the non-streaming timeout). A replayed answer has
#   fresh X-Relay-*-Id headers.
# - the response cache is off unless a TTL is given; it is keyed by the client's key and the whole body;
#   X-Relay-Cache is sent on non-streaming answers only while the cache is on (MISS when bypassed, and the
#   bypassed answer is not stored); only 200 answers are stored.
# - errors are OpenAI's envelope; an unknown model is 404 model_not_found.
RELAY = Profile(
    name="relay",
    fields=MappingProxyType({name: FORWARD for name in _RELAY_TRANSLATED}),
    messages=SILENT_DROPS,
    # Relay: cached_tokens and cache_creation_tokens "are counted inside prompt_tokens".
    usage_shape="relay",
    # Relay: "the stream ends with a data: {"error": ...} line and no [DONE]".
    stream_error="error_only",
    # The usage chunk is the client's choice for Anthropic and Gemini; OpenAI-compatible providers are always
    # asked (translate/relay.py).
    always_stream_usage=False,
    # EZAT's request reading, with Relay's codes on the body errors and on images to a model without vision.
    requests=replace(
        EZAT.requests,
        invalid_json=ErrorSpec(400, "We could not parse the JSON body of your request.", code="invalid_json"),
        not_an_object=ErrorSpec(400, "The request body must be a JSON object.", code="invalid_json"),
        model_not_enabled=_MODEL_NOT_FOUND,
        images_unsupported=ErrorSpec(
            400, "{path}: this model does not accept images", code="image_not_supported", param="{path}"
        ),
    ),
    # EZAT's Anthropic conversion (the limits, data URLs checked, no metadata; a PDF file part "Anthropic receives
    # as a document block"; "Extended thinking is not carried through"), except:
    anthropic=replace(
        EZAT.anthropic,
        sampling_by_capability=False,
        cap_temperature=True,
        # Relay: "Other part types (input_audio, …) are ... dropped for Anthropic".
        drop_unknown_parts=True,
        image_url_source=True,
        cache_control_on_images=False,
    ),
    catalog="models-relay.yaml",
    relay=Relay(
        request_id_header="x-relay-request-id",
        trace_id_header="x-relay-trace-id",
        observation_id_header="x-relay-observation-id",
        cost_header="x-relay-cost-usd",
        max_image_bytes=5 * 1024 * 1024,
        transient_retries=1,
        idempotency_header="idempotency-key",
        idempotency_ttl_seconds=24 * 3600.0,
        replayed_header="idempotency-replayed",
        cache_header="x-relay-cache",
        cache_bypass_values=frozenset({"no", "false", "bypass"}),
        stream_error_default_code="provider_error",
        relay_fields=frozenset({"metadata", "anthropic_tools", "output_config"}),
    ),
    # Relay: "budget hard-stops" (the doc gives no status): a reading, OpenAI's own answer to a spent quota — 429
    # insufficient_quota — with x-should-retry false, so no SDK retries into it (and Codex ends its turn on the code).
    key_limits=KeyLimits(
        over_budget=(429, "This key's budget is used up.", "insufficient_quota", "insufficient_quota"),
    ),
)

PROFILES: Mapping[str, Profile] = MappingProxyType({"ezat": EZAT, "lyrouter": LYROUTER, "relay": RELAY})


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
