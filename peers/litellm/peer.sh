# LiteLLM proxy, sourced by peers/certify.sh (the contract is in its header comment). One proxy serves both
# set-ups: its Anthropic model claude-test (bridged runs) and its OpenAI models (responses-native).
PEER_VERSION=1.110.2
PEER_REPLAY_PORT=9100
PEER_URL=http://127.0.0.1:4000/v1
PEER_KEY=sk-peer-test
# run  profile  set-up  implementation file  features...
PEER_RUNS=(
  "anthropic anthropic default implementation.yaml gateway-keys count-tokens tools parallel-tool-use thinking prompt-caching vision models-endpoint"
  "openai openai default implementation.yaml stream-usage usage-details tools parallel-tool-calls structured-outputs vision reasoning prompt-cache-usage models-endpoint"
  "ezat ezat default implementation.yaml"
  "responses responses default implementation.yaml gateway-keys tools parallel-tool-calls structured-outputs vision reasoning models-endpoint"
  # the native path passes previous_response_id, GET/DELETE and reasoning items on to OpenAI, which keeps
  # responses (state) and carries encrypted reasoning (reasoning-items): LiteLLM's docs claim both for OpenAI models
  "responses-native responses default implementation-responses-native.yaml gateway-keys tools parallel-tool-calls structured-outputs vision reasoning models-endpoint state reasoning-items"
)
peer_install() { [ -x "$PEERS/litellm/bin/litellm" ] || PEER_VENV="$PEERS/litellm" bash "$PEER_HERE/install.sh"; }
peer_start() { PEER_VENV="$PEERS/litellm" UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" PROXY_PORT=4000 STATE="$PEERS/litellm-state" bash "$PEER_HERE/run_peer.sh" start; }
peer_stop() { PEER_VENV="$PEERS/litellm" STATE="$PEERS/litellm-state" bash "$PEER_HERE/run_peer.sh" stop; }
