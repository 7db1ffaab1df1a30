#!/usr/bin/env bash
# The Responses clients through the reference gateway in each of its profiles, not only the one `clients --profile
# responses` embeds (ezat). The scenarios script Anthropic's answers (cassettes/clients/anthropic/), so each gateway
# is asked for its Anthropic-routed model: ezat anthropic/claude-sonnet-5-5 (its MODEL), lyrouter claude-sonnet-5-5 (its
# Anthropic channel), relay claude-sonnet (its MODEL_ANTHROPIC). Everything binds 127.0.0.1; each run stops what it
# started. Reports: $OUT/<profile>/ (default /tmp/gc-clients-profiles).
#   usage: benchmarks/clients_through_profiles.sh [ezat|lyrouter|relay ...]   (default: all three)
# Relay answers a provider 429 by falling back along the model's chain (its doc, "What the gateway does for you"),
# so the rate-limit scenario's one scripted Anthropic answer is followed by a call the scenario does not script:
# profile relay's own clients mark that scenario not applicable for that reason, and this run declares it with
# reference_gateway/model_maps/relay/responses-clients-expectations.yaml (XFAIL, with the doc's sentence).
set -u -o pipefail  # a clients run that fails (or judged nothing: exit 5) fails this script
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gc-clients-profiles}
profiles=("$@"); [ ${#profiles[@]} -gt 0 ] || profiles=(ezat lyrouter relay)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
status=0
for prof in "${profiles[@]}"; do
  case "$prof" in
    ezat) model=anthropic/claude-sonnet-5-5 ;;
    lyrouter) model=claude-sonnet-5-5 ;;
    relay) model=claude-sonnet ;;
    *) echo "unknown profile $prof (ezat, lyrouter, relay)" >&2; exit 3 ;;
  esac
  dir="$OUT/$prof"; rm -rf "$dir"; mkdir -p "$dir"
  up=$(free_port); gw=$(free_port)
  python3 -m harness.cli serve-upstream --port "$up" > "$dir/upstream.log" 2>&1 & su=$!
  python3 -m reference_gateway --profile "$prof" --upstream-url "http://127.0.0.1:$up" --api-key gc-clients-key \
    --port "$gw" --state-url "sqlite:///$dir/state.sqlite3" --log-level warning > "$dir/gateway.log" 2>&1 & rg=$!
  for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$gw/v1/models" -H 'authorization: Bearer gc-clients-key' && break; sleep 0.2
  done
  printf 'MODEL: %s\n' "$model" > "$dir/model-map.yaml"
  declared=(); expected="reference_gateway/model_maps/$prof/responses-clients-expectations.yaml"
  [ -f "$expected" ] && declared=(--expectations "$expected")
  echo "== responses clients through the reference gateway in profile $prof (model $model)"
  GC_GATEWAY_KEY=gc-clients-key python3 -m harness.cli clients --profile responses \
    --gateway-url "http://127.0.0.1:$gw/v1" --replay-url "http://127.0.0.1:$up" --model-map "$dir/model-map.yaml" \
    "${declared[@]}" --report-dir "$dir/report" | sed -n '/^  [a-z-]* *\(READY\|LIMITED\|BROKEN\|NOT RUN\)/p;/^verdict/p' || status=1
  kill "$rg" "$su" 2>/dev/null; wait "$rg" "$su" 2>/dev/null
done
exit $status
