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
)
peer_install() { [ -d "$PEERS/portkey/node_modules/@portkey-ai/gateway" ] || PEER_DIR="$PEERS/portkey" bash "$PEER_HERE/install.sh"; }
peer_start() {  # set-up: the provider Portkey routes requests to
  case "$1" in anthropic) PEER_KEY=sk-ant-client-test ;; openai) PEER_KEY=sk-openai-client-test ;; esac
  PEER_DIR="$PEERS/portkey" UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" UP_PROVIDER=$1 PROXY_PORT=8787 \
    STATE="$PEERS/portkey-state" bash "$PEER_HERE/run_peer.sh" start
}
peer_stop() { STATE="$PEERS/portkey-state" bash "$PEER_HERE/run_peer.sh" stop; }
