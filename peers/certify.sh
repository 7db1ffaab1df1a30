#!/usr/bin/env bash
# Reproduce the stored verdicts of the peer gateways (implementations/<gateway>-<version>/<profile>/): install each
# pinned peer into $PEERS (default /tmp/gc-peers), start it on loopback against the replay upstream certify serves on
# a fixed port, certify it with the profile's model map and the features the set-up supports, store the report, the
# results and each failure's exchange (peers/store_run.py, the peer's fake provider key scrubbed), stop the peer.
# Then regenerate the README's tables: gateway-conformance report --implementations implementations --out DIR.
#   usage: peers/certify.sh [litellm|portkey] [anthropic|openai|ezat|responses ...]   (default: both peers, every profile)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
PEERS=${PEERS:-/tmp/gc-peers}; mkdir -p "$PEERS"
cd "$root"
peers=(); profiles=()
for a in "$@"; do case "$a" in litellm|portkey) peers+=("$a") ;; anthropic|openai|ezat|responses) profiles+=("$a") ;;
  *) echo "unknown argument $a (peers: litellm portkey; profiles: anthropic openai ezat responses)" >&2; exit 3 ;; esac; done
[ ${#peers[@]} -gt 0 ] || peers=(litellm portkey)
[ ${#profiles[@]} -gt 0 ] || profiles=(anthropic openai ezat responses)
map() {  # profile -> a model map for the peers' one model (claude-test); every other role of ezat null
  case "$1" in
    anthropic) printf 'MODEL: claude-test\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' ;;
    openai|responses) printf 'MODEL: claude-test\nMODEL_SAMPLING: claude-test\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' ;;
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
    */responses) echo "--feature tools --feature parallel-tool-calls --feature structured-outputs --feature vision --feature reasoning --feature models-endpoint" ;;
  esac
}
certify() {  # peer version url port key
  local peer=$1 version=$2 url=$3 port=$4 key=$5 profile tmp
  for profile in "${profiles[@]}"; do
    tmp="$PEERS/$peer-$profile-report"; rm -rf "$tmp"; map "$profile" > "$PEERS/$profile-map.yaml"
    # shellcheck disable=SC2046
    GC_GATEWAY_KEY=$key python3 -m harness.cli certify --gateway-url "$url" --profile "$profile" --replay-port "$port" \
      --model-map "$PEERS/$profile-map.yaml" $(features "$peer" "$profile") --implementation "$here/$peer/implementation.yaml" \
      --report-dir "$tmp" || true
    python3 "$here/store_run.py" "$tmp" "$profile" "implementations/$peer-$version/$profile"
  done
}
for peer in "${peers[@]}"; do
  case "$peer" in
    litellm)
      [ -x "$PEERS/litellm/bin/litellm" ] || PEER_VENV="$PEERS/litellm" bash "$here/litellm/install.sh"
      PEER_VENV="$PEERS/litellm" UP_URL=http://127.0.0.1:9100 PROXY_PORT=4000 STATE="$PEERS/litellm-state" bash "$here/litellm/run_peer.sh" start
      certify litellm 1.110.2 http://127.0.0.1:4000/v1 9100 sk-peer-test
      STATE="$PEERS/litellm-state" PEER_VENV="$PEERS/litellm" bash "$here/litellm/run_peer.sh" stop ;;
    portkey)
      [ -d "$PEERS/portkey/node_modules/@portkey-ai/gateway" ] || PEER_DIR="$PEERS/portkey" bash "$here/portkey/install.sh"
      PEER_DIR="$PEERS/portkey" UP_URL=http://127.0.0.1:9101 PROXY_PORT=8787 STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" start
      certify portkey 1.15.2 http://127.0.0.1:8787/v1 9101 sk-ant-client-test
      STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" stop ;;
  esac
done
