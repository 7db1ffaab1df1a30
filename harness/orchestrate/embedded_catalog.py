"""Catalogs the embedded reference gateway serves under its own profiles: profiles `openai`, `anthropic` and
`responses`.

The reference gateway implements three documented gateways (ezat, lyrouter, relay), not a fourth one. The
`openai` catalog (what every OpenAI-compatible gateway promises) is judged on it in each of those three
profiles: each started as usual, its model roles mapped by `reference_gateway/model_maps/<gateway>/openai.yaml`
(each picks another provider family, so one certify judges the Anthropic, OpenAI-compatible and Gemini paths)
and its extended features claimed here — what each legitimately does not do (EZAT refuses `n > 1`) stays
unclaimed, so those rules are NOT_APPLICABLE "not claimed" there and judged where they are claimed.

Pure data and lookups; orchestrate.py starts the gateways.
"""

from __future__ import annotations

# The reference gateway profiles a catalog is judged on (default: the catalog's own name). The first one is
# the gateway a kill matrix (`mutants --profile openai`) mutates.
GATEWAYS: dict[str, tuple[str, ...]] = {
    "openai": ("ezat", "lyrouter", "relay"),
    "anthropic": ("ezat", "lyrouter", "relay"),
    "responses": ("ezat", "lyrouter", "relay"),
}

# The extended features of profile `openai` each reference gateway claims (specs/openai/profile.yaml).
_COMMON = ("gateway-keys", "stream-usage", "tools", "structured-outputs", "vision", "models-endpoint")
FEATURES: dict[tuple[str, str], tuple[str, ...]] = {
    # EZAT over Anthropic: refuses n > 1 and logprobs (its doc's refusal table), so neither is claimed.
    ("ezat", "openai"): (*_COMMON, "parallel-tool-calls", "prompt-cache-usage", "reasoning", "usage-details"),
    # LYRouter over its OpenAI-compatible channel (gpt-5.5): forwards every field and the upstream's answer.
    ("lyrouter", "openai"): (
        *_COMMON,
        "parallel-tool-calls",
        "prompt-cache-usage",
        "reasoning",
        "logprobs",
        "multiple-choices",
        "usage-details",
    ),
    # Relay over Gemini: no n, no logprobs; parallel_tool_calls has no Gemini equivalent (ignored), so
    # `parallel_tool_calls: false` is not honoured; Gemini reports no cache writes, reasoning is not carried.
    ("relay", "openai"): (*_COMMON, "prompt-cache-usage"),
    # EZAT's /v1/messages passes Anthropic models through unchanged (reference_gateway/inbound/messages.py), so
    # everything the Anthropic upstream does is the client's: tools, thinking and caching included.
    ("ezat", "anthropic"): (
        "gateway-keys",
        "pass-through",
        "count-tokens",
        "tools",
        "parallel-tool-use",
        "thinking",
        "prompt-caching",
        "vision",
        "models-endpoint",
    ),
    # LYRouter's map serves the anthropic catalog from its Anthropic channel (passed through, as on ezat: every
    # feature), Relay's from its OpenAI model, bridged through the chat flow (inbound/bridge.py): tools and parallel
    # calls carry over; thinking signatures and cache breakpoints have no place in the chat vocabulary, so thinking
    # and prompt-caching are not claimed, nor pass-through. With the openai catalog (Relay over Gemini) and the
    # responses catalog (Relay over Anthropic), each profile is judged on each of its families at least once (issue 47).
    ("lyrouter", "anthropic"): (
        "gateway-keys",
        "pass-through",
        "count-tokens",
        "tools",
        "parallel-tool-use",
        "thinking",
        "prompt-caching",
        "vision",
        "models-endpoint",
    ),
    ("relay", "anthropic"): ("gateway-keys", "tools", "parallel-tool-use", "vision", "models-endpoint"),
    # /v1/responses is bridged through each profile's chat flow (inbound/responses_bridge.py) and keeps responses on
    # the gateway's store (`state`); every profile serves it over a WebSocket too (inbound/responses_socket.py) and
    # answers /v1/responses/compact (inbound/responses_compact.py).
    # Reasoning is carried to Anthropic (thinking) and to OpenAI's channel (reasoning_effort), not by Relay's Gemini
    # path, as for profile openai. EZAT's bridge carries Claude's thinking blocks (signatures intact) in reasoning items
    # of its own making, and back on the next turn (inbound/reasoning_items.py): reasoning-items.
    ("ezat", "responses"): (
        "gateway-keys",
        "tools",
        "parallel-tool-calls",
        "structured-outputs",
        "vision",
        "reasoning",
        "reasoning-items",
        "state",
        "models-endpoint",
        "websocket",
        "compact",
    ),
    # LYRouter passes gpt-5.5's /v1/responses through to the Responses upstream (inbound/responses_native.py), so
    # reasoning items and their encrypted_content travel as they are (reasoning-items).
    ("lyrouter", "responses"): (
        "gateway-keys",
        "tools",
        "parallel-tool-calls",
        "structured-outputs",
        "vision",
        "reasoning",
        "reasoning-items",
        "state",
        "models-endpoint",
        "websocket",
        "compact",
    ),
    ("relay", "responses"): (
        "gateway-keys",
        "tools",
        "structured-outputs",
        "vision",
        "state",
        "models-endpoint",
        "websocket",
        "compact",
    ),
}


# What a gateway adds (issue 45; specs/features/gateway-features.md), claimed on every surface catalog where the
# gateway's doc allows it, each set up in reference_gateway/model_maps/<gateway>/<catalog>-features.yaml:
# - EZAT: its error table has its own 429 (rate_limit_exceeded, wait for retry-after) and a spent key's 402
#   insufficient_quota (rate-limits, budget); it documents no fallback and reports no cost.
# - LYRouter: its own 429 names its subject (rate-limits); "moves to the next channel on failure ... Once streaming
#   output has started, the gateway no longer switches channels" (fallback); a spent quota is a 429
#   rate_limit_error the SDKs retry, and it reports no cost ("the logs are authoritative"): no budget, no cost.
# - Relay: "budget hard-stops", "fallback along the model's fallback chain", X-Relay-Cost-Usd (all four; its own
#   rate limit is a reading, the doc names none).
_ADDED: dict[str, tuple[str, ...]] = {
    "ezat": ("rate-limits", "budget"),
    "lyrouter": ("rate-limits", "fallback"),
    "relay": ("rate-limits", "budget", "fallback", "cost"),
}
for (_gateway, _catalog), _claimed in list(FEATURES.items()):
    FEATURES[(_gateway, _catalog)] = (*_claimed, *_ADDED[_gateway])


def gateways_for(catalog: str) -> tuple[str, ...]:
    return GATEWAYS.get(catalog, (catalog,))


def features_for(gateway: str, catalog: str) -> tuple[str, ...] | None:
    """What the gateway in profile `gateway` claims for another catalog; None: the catalog is its own."""
    return FEATURES.get((gateway, catalog))
