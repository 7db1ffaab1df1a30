#!/usr/bin/env bash
# Start/stop the TensorZero gateway (a peer gateway) on loopback.
#   usage: run_peer.sh start|stop
#   env:   PEER_VENV  venv where install.sh put tensorzero 2026.6.0   (required for start)
#          UP_URL     the replay upstream, e.g. http://127.0.0.1:9104 (no /v1); replaces http://127.0.0.1:9999 in
#                     tensorzero.toml's api_base values
#          STATE      folder for pid, config, url and log (default ./state beside this script); it is also HOME
# The wheel's embedded launcher (launch_gateway.py) binds 127.0.0.1 on a port the OS picks (it takes no port):
# start writes the gateway's base URL, http://127.0.0.1:PORT/openai/v1, to $STATE/url and prints it.
# Provider keys are fake (sk-openai-fake-key, sk-ant-fake-key); usage analytics off in the config and the env.
set -u
here=$(cd "$(dirname "$0")" && pwd)
STATE=${STATE:-$here/state}; mkdir -p "$STATE"; STATE=$(cd "$STATE" && pwd)
. "$here/../lib.sh"
stop() { stop_pidfile "$STATE/pid"; rm -f "$STATE/url"; }
start_or_stop "${1:-start}"
PEER_VENV=${PEER_VENV:?set PEER_VENV to the venv install.sh made}
UP_URL=${UP_URL:-http://127.0.0.1:9999}
stop
sed "s#http://127.0.0.1:9999#$UP_URL#" "$here/tensorzero.toml" > "$STATE/tensorzero.toml"
(
  cd "$STATE" || exit 1
  export HOME="$STATE" TENSORZERO_DISABLE_PSEUDONYMOUS_USAGE_ANALYTICS=1 RUST_LOG=warn \
         OPENAI_API_KEY=sk-openai-fake-key ANTHROPIC_API_KEY=sk-ant-fake-key
  unset TENSORZERO_CLICKHOUSE_URL TENSORZERO_POSTGRES_URL TENSORZERO_VALKEY_URL TENSORZERO_AUTOPILOT_API_KEY \
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  exec "$PEER_VENV/bin/python" "$here/launch_gateway.py" "$STATE/tensorzero.toml" "$STATE/url"
) > "$STATE/gateway.log" 2>&1 &
echo $! > "$STATE/pid"
for _ in $(seq 1 60); do
  if [ -s "$STATE/url" ]; then
    url=$(cat "$STATE/url")
    # ready: an unknown route answers (any HTTP status) on the gateway's port
    if curl -s -o /dev/null -w '%{http_code}' "${url%/openai/v1}/health" 2>/dev/null | grep -q '^[1-5]'; then
      echo "tensorzero ready pid=$(cat "$STATE/pid") url=$url"; exit 0
    fi
  fi
  kill -0 "$(cat "$STATE/pid")" 2>/dev/null || break
  sleep 0.5
done
echo "tensorzero did not start"; tail -20 "$STATE/gateway.log"; stop; exit 1
