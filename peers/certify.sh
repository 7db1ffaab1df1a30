#!/usr/bin/env bash
# Reproduce the stored verdicts of the peer gateways (implementations/<gateway>-<version>/<profile>/): install each
# pinned peer into $PEERS (default /tmp/gc-peers), start it on loopback against the replay upstream certify serves on
# a fixed port, certify it with the profile's model map and the features the set-up supports, store the report, the
# results and each failure's exchange (peers/store_run.py, the peer's fake provider key scrubbed), stop the peer.
# Then regenerate the README's tables: gateway-conformance report --implementations implementations --out DIR.
#   usage: peers/certify.sh [litellm|portkey] [anthropic|openai|ezat|responses|responses-native ...]   (default: both
#   peers, every profile). responses-native: profile responses on LiteLLM's OpenAI models, whose /v1/responses
#   LiteLLM passes on to the provider's /v1/responses (its native path) instead of bridging it through chat.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
PEERS=${PEERS:-/tmp/gc-peers}; mkdir -p "$PEERS"
cd "$root"
peers=(); profiles=()
for a in "$@"; do case "$a" in litellm|portkey) peers+=("$a") ;; anthropic|openai|ezat|responses|responses-native) profiles+=("$a") ;;
  *) echo "unknown argument $a (peers: litellm portkey; profiles: anthropic openai ezat responses responses-native)" >&2; exit 3 ;; esac; done
[ ${#peers[@]} -gt 0 ] || peers=(litellm portkey)
[ ${#profiles[@]} -gt 0 ] || profiles=(anthropic openai ezat responses responses-native)
map() {  # profile -> a model map for the peers' one model (claude-test); every other role of ezat null
  case "$1" in
    anthropic) printf 'MODEL: claude-test\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' ;;
    openai|responses) printf 'MODEL: claude-test\nMODEL_SAMPLING: claude-test\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' ;;
    # LiteLLM's OpenAI models (config*.yaml): gpt-test a reasoning model, gpt-test-sampling one taking temperature
    responses-native) printf 'MODEL: gpt-test\nMODEL_SAMPLING: gpt-test-sampling\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' ;;
    # Portkey routes a model id as it comes: OpenAI's own (a reasoning model, and one taking temperature)
    portkey-responses-native) printf 'MODEL: gpt-5.5\nMODEL_SAMPLING: gpt-4.1\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' ;;
    ezat) printf 'MODEL: claude-test\nUNKNOWN_MODEL: gc-model-that-does-not-exist\nMODEL_NOT_PERMITTED: null\nMODEL_NO_CACHE: null\nMODEL_NO_FORCED_TOOL: null\nMODEL_SAMPLING: null\nMODEL_SMALL_OUTPUT: null\n' ;;
  esac
}
features() {  # peer profile -> the --feature flags its set-up supports
  case "$1/$2" in
    litellm/anthropic) echo "--feature gateway-keys --feature count-tokens --feature tools --feature parallel-tool-use --feature thinking --feature prompt-caching --feature vision --feature models-endpoint" ;;
    # Portkey: no keys of its own (gateway-keys), GET /v1/models goes to the provider (models-endpoint).
    portkey/anthropic) echo "--feature tools --feature parallel-tool-use --feature thinking --feature prompt-caching --feature vision" ;;
    # openai: every extended feature but logprobs and multiple-choices (Anthropic has neither).
    */openai) echo "--feature stream-usage --feature usage-details --feature tools --feature parallel-tool-calls --feature structured-outputs --feature vision --feature reasoning --feature prompt-cache-usage --feature models-endpoint" ;;
    */ezat) echo "" ;;
    # responses: /v1/responses over the same Anthropic model; no gateway here keeps responses for the test (state).
    # models-endpoint as in openai: the same GET /v1/models a Responses client (Codex) reads.
    litellm/responses) echo "--feature gateway-keys --feature tools --feature parallel-tool-calls --feature structured-outputs --feature vision --feature reasoning --feature models-endpoint" ;;
    */responses) echo "--feature tools --feature parallel-tool-calls --feature structured-outputs --feature vision --feature reasoning --feature models-endpoint" ;;
    # LiteLLM's native path passes previous_response_id, GET/DELETE and reasoning items on to OpenAI, which keeps
    # responses (state) and carries encrypted reasoning (reasoning-items): its docs claim both for OpenAI models.
    # Portkey routed as provider openai passes /v1/responses on too (its GET/DELETE and input_items routes included).
    litellm/responses-native) echo "--feature gateway-keys --feature tools --feature parallel-tool-calls --feature structured-outputs --feature vision --feature reasoning --feature models-endpoint --feature state --feature reasoning-items" ;;
    # Portkey: no keys of its own (the client's key is the provider's), as on profile anthropic.
    */responses-native) echo "--feature tools --feature parallel-tool-calls --feature structured-outputs --feature vision --feature reasoning --feature models-endpoint --feature state --feature reasoning-items" ;;
  esac
}
# The runs on each peer's default set-up, and whether the native Responses run (its own set-up) is asked for.
bridged=(); native=0
for p in "${profiles[@]}"; do if [ "$p" = responses-native ]; then native=1; else bridged+=("$p"); fi; done
certify() {  # peer version url port key implementation-file run...
  local peer=$1 version=$2 url=$3 port=$4 key=$5 impl=$6 run profile tmp; shift 6
  for run in "$@"; do
    profile=${run%-native}; tmp="$PEERS/$peer-$run-report"; rm -rf "$tmp"
    if [ "$peer/$run" = portkey/responses-native ]; then map portkey-responses-native; else map "$run"; fi > "$PEERS/$run-map.yaml"
    # shellcheck disable=SC2046
    GC_GATEWAY_KEY=$key python3 -m harness.cli certify --gateway-url "$url" --profile "$profile" --replay-port "$port" \
      --model-map "$PEERS/$run-map.yaml" $(features "$peer" "$run") --implementation "$impl" \
      --report-dir "$tmp" || true
    python3 "$here/store_run.py" "$tmp" "$profile" "implementations/$peer-$version/$run"
  done
}
native_runs=(); [ "$native" = 1 ] && native_runs=(responses-native)
for peer in "${peers[@]}"; do
  case "$peer" in
    litellm)  # one proxy serves both set-ups: its Anthropic models and its OpenAI models (config*.yaml)
      [ -x "$PEERS/litellm/bin/litellm" ] || PEER_VENV="$PEERS/litellm" bash "$here/litellm/install.sh"
      PEER_VENV="$PEERS/litellm" UP_URL=http://127.0.0.1:9100 PROXY_PORT=4000 STATE="$PEERS/litellm-state" bash "$here/litellm/run_peer.sh" start
      certify litellm 1.110.2 http://127.0.0.1:4000/v1 9100 sk-peer-test "$here/litellm/implementation.yaml" "${bridged[@]}"
      certify litellm 1.110.2 http://127.0.0.1:4000/v1 9100 sk-peer-test "$here/litellm/implementation-responses-native.yaml" "${native_runs[@]}"
      STATE="$PEERS/litellm-state" PEER_VENV="$PEERS/litellm" bash "$here/litellm/run_peer.sh" stop ;;
    portkey)  # routed as provider anthropic, then (native) as provider openai: a start each
      [ -d "$PEERS/portkey/node_modules/@portkey-ai/gateway" ] || PEER_DIR="$PEERS/portkey" bash "$here/portkey/install.sh"
      if [ ${#bridged[@]} -gt 0 ]; then
        PEER_DIR="$PEERS/portkey" UP_URL=http://127.0.0.1:9101 PROXY_PORT=8787 STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" start
        certify portkey 1.15.2 http://127.0.0.1:8787/v1 9101 sk-ant-client-test "$here/portkey/implementation.yaml" "${bridged[@]}"
        STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" stop
      fi
      if [ "$native" = 1 ]; then
        PEER_DIR="$PEERS/portkey" UP_URL=http://127.0.0.1:9101 UP_PROVIDER=openai PROXY_PORT=8787 STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" start
        certify portkey 1.15.2 http://127.0.0.1:8787/v1 9101 sk-openai-client-test "$here/portkey/implementation-responses-native.yaml" responses-native
        STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" stop
      fi ;;
  esac
done
