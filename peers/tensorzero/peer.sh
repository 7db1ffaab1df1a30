# TensorZero gateway, sourced by peers/certify.sh (the contract is in its header comment). One set-up: the wheel's
# embedded HTTP gateway (OpenAI-compatible routes only) with three models in tensorzero.toml, two on its OpenAI
# provider (gpt-5.5, gpt-4.1) and one on its Anthropic provider (claude-sonnet-4-5-20250929).
PEER_VERSION=2026.6.0
PEER_REPLAY_PORT=9104
# the embedded launcher binds 127.0.0.1 on a port the OS picks (it takes none): peer_start sets PEER_URL to
# http://127.0.0.1:PORT/openai/v1 from what it started
PEER_URL=
# no keys of its own in this set-up (TensorZero's API keys need [gateway.auth] and Postgres; the embedded gateway
# mounts no auth layer) and "API keys sent from the OpenAI client will be ignored" (its OpenAI-compatible API
# reference): the client's key is a placeholder, the provider keys are the gateway's own (fake) ones
PEER_KEY=sk-tensorzero-unused
# run  profile  set-up  implementation file  features... (each claimed where TensorZero's OpenAI-compatible API
# reference documents it: stream_options.include_usage, tools/tool_choice/parallel_tool_calls, image_url parts,
# prompt_tokens_details.cached_tokens, response_format json_schema)
PEER_RUNS=(
  "openai-openai openai default implementation.yaml stream-usage tools parallel-tool-calls structured-outputs vision prompt-cache-usage"
  "openai-anthropic openai default implementation.yaml stream-usage tools parallel-tool-calls structured-outputs vision prompt-cache-usage"
)
peer_install() { PEER_VENV="$PEERS/tensorzero" bash "$PEER_HERE/install.sh"; }
peer_start() {
  PEER_VENV="$PEERS/tensorzero" UP_URL="http://127.0.0.1:$PEER_REPLAY_PORT" STATE="$PEERS/tensorzero-state" \
    bash "$PEER_HERE/run_peer.sh" start
  PEER_URL=$(cat "$PEERS/tensorzero-state/url")
}
peer_stop() { STATE="$PEERS/tensorzero-state" bash "$PEER_HERE/run_peer.sh" stop; }
