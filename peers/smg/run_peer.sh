#!/usr/bin/env bash
# Start/stop Shepherd Model Gateway (smg launch, a peer gateway) on loopback in front of one provider.
#   usage: run_peer.sh start|stop
#   env:   PEER_VENV   venv where install.sh put smg                             (required for start)
#          BACKEND     openai | anthropic: smg's --backend (one provider family per process)
#          UP_URL      the provider's root URL, e.g. http://127.0.0.1:9102 (smg appends /v1/...)
#          PROXY_PORT  the gateway's port; PROM_PORT its Prometheus metrics port (29000 on 0.0.0.0 by default,
#                      so both are bound to 127.0.0.1 here, a port per instance)
#          STATE       folder for the pid file, the log and a scratch HOME (default ./state beside this script)
# No --api-key: smg then has no key of its own, registers the worker in wildcard mode (any model id passes) and
# forwards the client's Authorization to the provider (BYOK). Responses are kept in memory (--history-backend
# memory, the default). The circuit breaker is off (--disable-circuit-breaker): at its default (10 failures in
# 120 s; a provider 5xx counts once per retry, 5 times) the catalog's provider-error rules open it and every later
# request is a 503 for 60 s. Retries stay at smg's defaults (5 attempts on 408/429/5xx for /v1/chat/completions).
set -u
here=$(cd "$(dirname "$0")" && pwd)
STATE=${STATE:-$here/state}; mkdir -p "$STATE"
. "$here/../lib.sh"
stop() { stop_pidfile "$STATE/pid" 10; }
start_or_stop "${1:-start}"
PEER_VENV=${PEER_VENV:?set PEER_VENV to the venv where install.sh installed smg}
BACKEND=${BACKEND:?set BACKEND to openai or anthropic}
UP_URL=${UP_URL:?set UP_URL to the provider root URL}
PROXY_PORT=${PROXY_PORT:?set PROXY_PORT}; PROM_PORT=${PROM_PORT:?set PROM_PORT}
stop
mkdir -p "$STATE/home"
HOME="$STATE/home" NO_COLOR=1 "$PEER_VENV/bin/smg" launch --backend "$BACKEND" --worker-urls "$UP_URL" \
  --host 127.0.0.1 --port "$PROXY_PORT" --prometheus-host 127.0.0.1 --prometheus-port "$PROM_PORT" \
  --history-backend memory --disable-circuit-breaker --log-level info > "$STATE/proxy.log" 2>&1 &
echo $! > "$STATE/pid"
# ready: the worker is registered once the readiness probe answers 200
for _ in $(seq 1 120); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROXY_PORT/readiness" 2>/dev/null)" = 200 ]; then
    echo "smg ready pid=$(cat "$STATE/pid") backend=$BACKEND port=$PROXY_PORT"; exit 0
  fi
  kill -0 "$(cat "$STATE/pid")" 2>/dev/null || break
  sleep 0.25
done
echo "smg did not start"; tail -20 "$STATE/proxy.log"; stop; exit 1
