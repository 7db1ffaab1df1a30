# Claude apps gateway (`claude gateway` in npm @anthropic-ai/claude-code 2.1.332), sourced by peers/certify.sh
# (the contract is in its header comment). One set-up: one upstream of provider anthropic (the replay), its own
# PostgreSQL and a stub OIDC IdP (run_peer.sh); clients send the bearer token the device-flow sign-in got.
PEER_VERSION=2.1.332
PEER_REPLAY_PORT=9105
PEER_URL=http://127.0.0.1:3480/v1
PEER_KEY=  # set by peer_start: the gateway session token from the sign-in
# Its docs claim: the Messages API unchanged, /v1/messages and /v1/messages/count_tokens ("Messages — required"),
# pass-through to api.anthropic.com, the upstream credential held by the gateway (developers hold none), and
# GET /v1/models in the "Anthropic models-list shape" (its GET /protocol, "Models — optional"; it serves its own list).
# bearer-credentials: its clients sign in (device flow) and send the session token as Authorization: Bearer, as its
# GET /protocol prescribes ("Client sends `Authorization: Bearer <token>` on every subsequent request")
PEER_RUNS=(
  "anthropic anthropic default implementation.yaml gateway-keys bearer-credentials pass-through count-tokens tools parallel-tool-use thinking prompt-caching vision models-endpoint"
)
peer_install() {
  [ -x "$PEERS/claude-gateway/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ] ||
    PEER_DIR="$PEERS/claude-gateway" bash "$PEER_HERE/install.sh"
}
peer_start() {
  PEER_DIR="$PEERS/claude-gateway" UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" GW_PORT=3480 OIDC_PORT=3481 PG_PORT=55432 \
    STATE="$PEERS/claude-gateway-state" PG_DIR=/tmp/gc-claude-gateway/pg bash "$PEER_HERE/run_peer.sh" start
  PEER_KEY=$(cat "$PEERS/claude-gateway-state/token")
}
peer_stop() { STATE="$PEERS/claude-gateway-state" PG_DIR=/tmp/gc-claude-gateway/pg bash "$PEER_HERE/run_peer.sh" stop; }
