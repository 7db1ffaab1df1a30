#!/usr/bin/env bash
# Reproduce the stored profile-anthropic verdicts of the peer gateways (implementations/<gateway>-<version>/anthropic/):
# install each pinned peer into $PEERS (default /tmp/gc-peers), start it on loopback against the replay upstream
# certify starts on a fixed port, certify /v1/messages with the features the set-up supports, store the report
# (the gateway's own provider key scrubbed), stop the peer.
#   usage: peers/certify_anthropic.sh [litellm|portkey ...]      (default: both)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
PEERS=${PEERS:-/tmp/gc-peers}; mkdir -p "$PEERS"
map="$PEERS/anthropic-map.yaml"
printf 'MODEL: claude-test\nUNKNOWN_MODEL: gc-model-that-does-not-exist\n' > "$map"
run() {  # name version url port key features...
  local name=$1 version=$2 url=$3 port=$4 key=$5; shift 5
  local out="$root/implementations/$name-$version/anthropic" tmp="$PEERS/$name-report"
  rm -rf "$tmp"
  GC_GATEWAY_KEY=$key python3 -m harness.cli certify --gateway-url "$url" --profile anthropic --replay-port "$port" \
    --model-map "$map" "$@" --implementation-project "$name" --implementation-version "$version" --report-dir "$tmp" || true
  mkdir -p "$out"
  for f in conformance-report.yaml anthropic/results.json; do
    sed -e 's/sk-ant-fake-key/<UPSTREAM_KEY>/g' "$tmp/$f" > "$out/$(basename "$f")"
  done
}
for peer in "${@:-litellm portkey}"; do
  for p in $peer; do
    case "$p" in
      litellm)
        [ -x "$PEERS/litellm/bin/litellm" ] || PEER_VENV="$PEERS/litellm" bash "$here/litellm/install.sh"
        PEER_VENV="$PEERS/litellm" UP_URL=http://127.0.0.1:9100 PROXY_PORT=4000 STATE="$PEERS/litellm-state" bash "$here/litellm/run_peer.sh" start
        run litellm 1.110.2 http://127.0.0.1:4000/v1 9100 sk-peer-test --feature gateway-keys --feature count-tokens --feature tools \
          --feature parallel-tool-use --feature thinking --feature prompt-caching --feature vision --feature models-endpoint
        STATE="$PEERS/litellm-state" PEER_VENV="$PEERS/litellm" bash "$here/litellm/run_peer.sh" stop ;;
      portkey)
        [ -d "$PEERS/portkey/node_modules/@portkey-ai/gateway" ] || PEER_DIR="$PEERS/portkey" bash "$here/portkey/install.sh"
        PEER_DIR="$PEERS/portkey" UP_URL=http://127.0.0.1:9101 PROXY_PORT=8787 STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" start
        # No gateway-keys (clients bring the provider's key), no models-endpoint (GET /v1/models goes to the provider).
        run portkey 1.15.2 http://127.0.0.1:8787/v1 9101 sk-ant-client-test --feature tools --feature parallel-tool-use \
          --feature thinking --feature prompt-caching --feature vision
        STATE="$PEERS/portkey-state" bash "$here/portkey/run_peer.sh" stop ;;
      *) echo "unknown peer $p (litellm, portkey)" >&2; exit 3 ;;
    esac
  done
done
