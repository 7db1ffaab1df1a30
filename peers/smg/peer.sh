# Shepherd Model Gateway (SMG, PyPI smg; the former sglang-router), sourced by peers/certify.sh (the contract is in
# its header comment). smg serves one provider family per process (--backend), so two set-ups, a start each:
# backend openai (/v1/chat/completions and /v1/responses in front of the replay playing OpenAI) and backend
# anthropic (/v1/messages in front of the replay playing Anthropic).
PEER_VERSION=1.13.0
PEER_REPLAY_PORT=9102
PEER_URL=http://127.0.0.1:30100/v1
PEER_KEY=sk-openai-client-test
# no key of its own in this set-up (no --api-key): the client's Authorization goes on to the provider (BYOK), so
# gateway-keys is not claimed (smg always forwards the caller's Authorization, a --tenant-api-key too); GET /v1/models
# asks the provider with the client's key. Features as smg's docs state them: "a fully OpenAI-compatible API" relayed
# to OpenAI (n documented, 1-10), the Responses API with server-kept responses (state: --history-backend memory;
# reasoning-items not claimed: no doc, and smg drops reasoning input items), Anthropic Messages with tool use,
# extended thinking and prompt caching (no count_tokens route: 501; not pass-through: the body is re-serialised).
# run  profile  set-up  implementation file  features...
PEER_RUNS=(
  "openai openai openai implementation.yaml stream-usage usage-details tools parallel-tool-calls structured-outputs vision reasoning prompt-cache-usage logprobs multiple-choices models-endpoint"
  "responses responses openai implementation-responses.yaml tools parallel-tool-calls structured-outputs vision reasoning models-endpoint state"
  "anthropic anthropic anthropic implementation-anthropic.yaml tools thinking prompt-caching parallel-tool-use vision"
)
peer_install() { PEER_VENV="$PEERS/smg" bash "$PEER_HERE/install.sh"; }
peer_start() {  # set-up: the provider family smg is launched for (--backend)
  local port prom
  case "$1" in
    openai) port=30100; prom=29102; PEER_KEY=sk-openai-client-test ;;
    anthropic) port=30101; prom=29103; PEER_KEY=sk-ant-client-test ;;
    *) echo "unknown set-up $1" >&2; return 3 ;;
  esac
  PEER_URL="http://127.0.0.1:$port/v1"
  PEER_VENV="$PEERS/smg" BACKEND=$1 UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" PROXY_PORT=$port PROM_PORT=$prom \
    STATE="$PEERS/smg-state-$1" bash "$PEER_HERE/run_peer.sh" start
}
peer_stop() { STATE="$PEERS/smg-state-$1" bash "$PEER_HERE/run_peer.sh" stop; }
