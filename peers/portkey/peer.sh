# Portkey gateway, sourced by peers/certify.sh (the contract is in its header comment). Two set-ups, a start each:
# routed as provider anthropic (the preload's default), and as provider openai (its native /v1/responses).
PEER_VERSION=1.15.2
PEER_REPLAY_PORT=9101
PEER_URL=http://127.0.0.1:8787/v1
# no keys of its own (gateway-keys not claimed): the client's key is the provider's; GET /v1/models goes to the
# provider (models-endpoint not claimed on anthropic)
PEER_RUNS=(
  "anthropic anthropic anthropic implementation.yaml tools parallel-tool-use thinking prompt-caching vision"
  "openai openai anthropic implementation.yaml stream-usage usage-details tools parallel-tool-calls structured-outputs vision reasoning prompt-cache-usage models-endpoint"
  "ezat ezat anthropic implementation.yaml"
  "responses responses anthropic implementation.yaml tools parallel-tool-calls structured-outputs vision reasoning models-endpoint"
  # routed as provider openai, /v1/responses passes on (GET/DELETE and input_items routes included)
  "responses-native responses openai implementation-responses-native.yaml tools parallel-tool-calls structured-outputs vision reasoning models-endpoint state reasoning-items"
  # the gateway features (issue 45): every request routed through config-features.json, a fallback strategy over two
  # Anthropic targets (fallback); Portkey's open-source gateway has no keys of its own, budgets or cost to claim
  "openai-features openai features implementation-features.yaml fallback rule=openai/rate-limits/* rule=openai/budget/* rule=openai/fallback/* rule=openai/cost/*"
  "anthropic-features anthropic features implementation-features.yaml fallback rule=anthropic/rate-limits/* rule=anthropic/budget/* rule=anthropic/fallback/* rule=anthropic/cost/*"
  # /v1/responses routed as provider openai (Portkey passes it on to the provider's /v1/responses)
  "responses-features responses features-openai implementation-features.yaml fallback rule=responses/rate-limits/* rule=responses/budget/* rule=responses/fallback/* rule=responses/cost/*"
)
peer_install() { [ -d "$PEERS/portkey/node_modules/@portkey-ai/gateway" ] || PEER_DIR="$PEERS/portkey" bash "$PEER_HERE/install.sh"; }
peer_start() {  # set-up: the provider Portkey routes requests to (features: the fallback config, to anthropic)
  local up="http://127.0.0.1:$PEER_REPLAY_PORT" provider=$1 config=""
  case "$1" in anthropic) PEER_KEY=sk-ant-client-test ;; openai) PEER_KEY=sk-openai-client-test ;; esac
  case "$1" in
    features) PEER_KEY=sk-ant-client-test provider=anthropic
      config=$(sed "s#\${UP}#$up#g" "$PEER_HERE/config-features.json" | tr -d '\n') ;;
    features-openai) PEER_KEY=sk-openai-client-test provider=openai
      config=$(sed "s#\${UP}#$up#g" "$PEER_HERE/config-features-openai.json" | tr -d '\n') ;;
  esac
  PEER_PORTKEY_CONFIG=$config PEER_DIR="$PEERS/portkey" UP_URL=$up UP_PROVIDER=$provider PROXY_PORT=8787 \
    STATE="$PEERS/portkey-state" bash "$PEER_HERE/run_peer.sh" start
}
peer_stop() { STATE="$PEERS/portkey-state" bash "$PEER_HERE/run_peer.sh" stop; }
