# LiteLLM proxy, sourced by peers/certify.sh (the contract is in its header comment). One proxy serves both
# set-ups: its Anthropic model claude-test (bridged runs) and its OpenAI models (responses-native).
PEER_VERSION=1.110.2
PEER_REPLAY_PORT=9100
PEER_URL=http://127.0.0.1:4000/v1
PEER_KEY=sk-peer-test
# run  profile  set-up  implementation file  features...
PEER_RUNS=(
  "anthropic anthropic default implementation.yaml gateway-keys count-tokens tools parallel-tool-use thinking prompt-caching vision models-endpoint"
  "openai openai default implementation.yaml gateway-keys stream-usage usage-details tools parallel-tool-calls structured-outputs vision reasoning prompt-cache-usage models-endpoint"
  "ezat ezat default implementation.yaml"
  # websocket: LiteLLM serves Responses WebSocket mode on /v1/responses (proxy/response_api_endpoints/endpoints.py,
  # responses_websocket_endpoint, citing OpenAI's guide); judged on the bridged run only: on the native path it relays
  # the socket to the provider's own WebSocket, which the replay does not play (implementation-responses-native.yaml);
  # compact: its docs' /responses/compact names provider openai only
  "responses responses default implementation.yaml gateway-keys tools parallel-tool-calls structured-outputs vision reasoning models-endpoint websocket"
  # the native path passes previous_response_id, GET/DELETE and reasoning items on to OpenAI, which keeps
  # responses (state) and carries encrypted reasoning (reasoning-items): LiteLLM's docs claim both for OpenAI models
  "responses-native responses default implementation-responses-native.yaml gateway-keys tools parallel-tool-calls structured-outputs vision reasoning models-endpoint state reasoning-items compact"
  # the gateway features (issue 45) on config_features.yaml: a provider's 429 passed on, router fallbacks, the cost
  # header; budgets and its own per-key limits need a database (not set up)
  "openai-features openai features implementation-features.yaml rate-limits fallback cost rule=openai/rate-limits/* rule=openai/budget/* rule=openai/fallback/* rule=openai/cost/*"
  "anthropic-features anthropic features implementation-features.yaml rate-limits fallback cost rule=anthropic/rate-limits/* rule=anthropic/budget/* rule=anthropic/fallback/* rule=anthropic/cost/*"
  "responses-features responses features implementation-features.yaml rate-limits fallback cost rule=responses/rate-limits/* rule=responses/budget/* rule=responses/fallback/* rule=responses/cost/*"
)
peer_install() { [ -x "$PEERS/litellm/bin/litellm" ] || PEER_VENV="$PEERS/litellm" bash "$PEER_HERE/install.sh"; }
peer_start() {  # set-up: default (config_deterministic.yaml) or features (config_features.yaml)
  local config=config_deterministic.yaml; [ "$1" = features ] && config=config_features.yaml
  CONFIG=$config PEER_VENV="$PEERS/litellm" UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" PROXY_PORT=4000 \
    STATE="$PEERS/litellm-state" bash "$PEER_HERE/run_peer.sh" start
}
peer_stop() { PEER_VENV="$PEERS/litellm" STATE="$PEERS/litellm-state" bash "$PEER_HERE/run_peer.sh" stop; }
