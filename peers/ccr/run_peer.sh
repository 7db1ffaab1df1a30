#!/usr/bin/env bash
# Start/stop Claude Code Router 2.0.0 (a peer gateway) on loopback, in the foreground: `node <cli.js> start` serves
# in its own process (`ccr start` does not daemonize; only `ccr code`/`ccr restart` spawn a detached copy, which this
# never runs), so the pid we keep is the server's.
#   usage: run_peer.sh start|stop
#   env:   PEER_DIR   folder where install.sh put node_modules/@musistudio/claude-code-router   (required for start)
#          SETUP      the provider family CCR bridges to: openai | anthropic | gemini (config-$SETUP.json)
#          UP_URL     the replay upstream, e.g. http://127.0.0.1:9103 (no /v1)
#          PROXY_PORT gateway port (default 3460)
#          GW_KEY     CCR's own APIKEY, which clients must send (default sk-ccr-gateway-test)
#          STATE      folder for the pid, the log and the scratch HOME (default ./state beside this script)
# CCR keeps its config in $HOME/.claude-code-router/config.json (and writes $HOME/.claude.json, its pid file and
# logs/ there): HOME is a fresh scratch folder under $STATE. HOST is 127.0.0.1 in every config; CCR forces 127.0.0.1
# only when APIKEY is unset, so the config must say it. Proxy variables are cleared (CCR reads only its config's
# PROXY_URL/HTTPS_PROXY keys, but nothing here should go through a proxy).
set -u
here=$(cd "$(dirname "$0")" && pwd)
STATE=${STATE:-$here/state}; mkdir -p "$STATE"; STATE=$(cd "$STATE" && pwd)
PROXY_PORT=${PROXY_PORT:-3460}
GW_KEY=${GW_KEY:-sk-ccr-gateway-test}
. "$here/../lib.sh"
stop() { stop_pidfile "$STATE/pid"; }
start_or_stop "${1:-start}"
PEER_DIR=${PEER_DIR:?set PEER_DIR to the folder where install.sh installed @musistudio/claude-code-router}
PEER_DIR=$(cd "$PEER_DIR" && pwd)
SETUP=${SETUP:?set SETUP to openai, anthropic or gemini}
UP_URL=${UP_URL:?set UP_URL to the replay upstream, e.g. http://127.0.0.1:9103}
entry="$PEER_DIR/node_modules/@musistudio/claude-code-router/dist/cli.js"
[ -f "$entry" ] || { echo "no $entry: run install.sh first" >&2; exit 1; }
[ -f "$here/config-$SETUP.json" ] || { echo "no $here/config-$SETUP.json" >&2; exit 2; }
stop
home="$STATE/home-$SETUP"; rm -rf "$home"; mkdir -p "$home/.claude-code-router"
sed -e "s#@UP_URL@#$UP_URL#g" -e "s#@PORT@#$PROXY_PORT#g" -e "s#@APIKEY@#$GW_KEY#g" \
  "$here/config-$SETUP.json" > "$home/.claude-code-router/config.json"
(
  cd "$STATE" || exit 1
  exec env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy \
    HOME="$home" node "$entry" start
) > "$STATE/ccr-$SETUP.log" 2>&1 &
echo $! > "$STATE/pid"
pid=$(cat "$STATE/pid")
for _ in $(seq 1 60); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROXY_PORT/health" 2>/dev/null)" = 200 ]; then
    # every listening socket of the process must be on loopback
    socks=$(ss -ltnpH 2>/dev/null | grep "pid=$pid," | awk '{print $4}')
    for s in $socks; do
      case "$s" in 127.0.0.1:*) ;; *) echo "ccr listens on $s (not loopback): stopping"; stop; exit 1 ;; esac
    done
    echo "ccr ($SETUP) ready pid=$pid port=$PROXY_PORT listening on: $(echo $socks)"; exit 0
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
echo "ccr did not start"; tail -20 "$STATE/ccr-$SETUP.log"; stop; exit 1
