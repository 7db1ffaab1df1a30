# Claude Code Router (CCR) 2.0.0, sourced by peers/certify.sh (the contract is in its header comment).
# CCR serves Anthropic's /v1/messages (and /v1/messages/count_tokens) and translates each request with its
# "transformers" for the provider its Router picks. One set-up per provider family it bridges to, a config and a
# start each (config-<family>.json): an OpenAI-compatible chat provider (gpt-4.1), Anthropic through the Anthropic
# transformer (pass-through), Gemini through the gemini transformer. Profile anthropic only: its /v1/chat/completions
# and /v1/responses routes are registered by the OpenAI transformers but are not client endpoints (the router picks a
# provider only for paths ending /v1/messages: POST /v1/chat/completions answers 404 "Provider 'undefined' not found";
# docs/server/api/overview.md lists /v1/messages and /v1/messages/count_tokens).
PEER_VERSION=2.0.0
PEER_REPLAY_PORT=9103
PEER_URL=http://127.0.0.1:3460/v1
# CCR's own APIKEY (config APIKEY): clients send it as x-api-key or Authorization: Bearer; CCR sends its provider's
# api_key upstream, never the client's (gateway-keys claimed). No GET /v1/models route (models-endpoint not claimed).
PEER_KEY=sk-ccr-gateway-test
# run  profile  set-up  implementation file  features (what CCR's docs say it does; see implementation-*.yaml)
PEER_RUNS=(
  "anthropic-openai anthropic openai implementation-openai.yaml gateway-keys count-tokens tools vision"
  "anthropic-anthropic anthropic anthropic implementation-anthropic.yaml gateway-keys count-tokens tools vision pass-through thinking prompt-caching parallel-tool-use"
  "anthropic-gemini anthropic gemini implementation-gemini.yaml gateway-keys count-tokens tools vision"
)
peer_install() {
  [ -f "$PEERS/ccr/node_modules/@musistudio/claude-code-router/dist/cli.js" ] || PEER_DIR="$PEERS/ccr" bash "$PEER_HERE/install.sh"
}
peer_start() {  # set-up: the provider family (openai | anthropic | gemini)
  PEER_DIR="$PEERS/ccr" SETUP=$1 UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" PROXY_PORT=3460 GW_KEY=$PEER_KEY \
    STATE="$PEERS/ccr-state" bash "$PEER_HERE/run_peer.sh" start
}
peer_stop() { STATE="$PEERS/ccr-state" bash "$PEER_HERE/run_peer.sh" stop; }
