#!/usr/bin/env bash
# Start/stop the Claude apps gateway (`claude gateway`, Claude Code 2.1.332) on loopback, with what it needs:
# its own PostgreSQL cluster and a stub OIDC identity provider; then sign in once (device flow) for a bearer token.
#   usage: run_peer.sh start|stop
#   env:   PEER_DIR   folder where install.sh installed @anthropic-ai/claude-code       (required for start)
#          STATE      folder for pids, logs, the filled-in gateway.yaml, the scratch HOME and the token
#                     (default ./state beside this script)
#          PG_DIR     folder for the PostgreSQL cluster (default $STATE/pg); recreated on every start
#          UP_URL     the Anthropic upstream's base URL, no /v1 (e.g. http://127.0.0.1:9105)  (required for start)
#          GW_PORT    gateway port (default 3480); OIDC_PORT stub IdP port (default 3481); PG_PORT (default 55432)
# On start, $STATE/token holds the gateway bearer token (1 test user, ttl 4 h) that clients send as
# `Authorization: Bearer`; peer.sh reads it into PEER_KEY. Everything listens on 127.0.0.1 only; stop ends the
# three processes by their pids (postgres with pg_ctl on its own data folder).
set -u
here=$(cd "$(dirname "$0")" && pwd)
STATE=${STATE:-$here/state}; mkdir -p "$STATE"; STATE=$(cd "$STATE" && pwd)
PG_DIR=${PG_DIR:-$STATE/pg}
GW_PORT=${GW_PORT:-3480}; OIDC_PORT=${OIDC_PORT:-3481}; PG_PORT=${PG_PORT:-55432}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

. "$here/../lib.sh"
stop_pid() { stop_pidfile "$STATE/$1.pid"; }  # stop_pid NAME: the process in $STATE/NAME.pid
stop() {
  stop_pid gateway
  stop_pid oidc
  if [ -f "$PG_DIR/data/postmaster.pid" ]; then
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 ||
      kill "$(head -1 "$PG_DIR/data/postmaster.pid")" 2>/dev/null
  fi
  rm -f "$STATE/token"
}
fail() { echo "claude-gateway did not start: $1" >&2; tail -20 "$STATE/gateway.log" 2>/dev/null >&2; stop; exit 1; }

start_or_stop "${1:-start}"
PEER_DIR=${PEER_DIR:?set PEER_DIR to the folder where install.sh installed @anthropic-ai/claude-code}
UP_URL=${UP_URL:?set UP_URL to the upstream base URL}
bin="$PEER_DIR/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
[ -x "$bin" ] || { echo "no $bin: run install.sh first" >&2; exit 1; }
[ -n "$PG_BIN" ] || { echo "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2; exit 1; }
stop

# 1. PostgreSQL: a fresh cluster, trust auth, 127.0.0.1 only, its socket in its own folder
rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$PG_DIR"
as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U gateway --auth=trust -E UTF8 >"$STATE/initdb.log" 2>&1 || fail "initdb (see $STATE/initdb.log)"
as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -o \
  "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PG_DIR" start >/dev/null || fail "pg_ctl start (see $PG_DIR/postgres.log)"
psql -h 127.0.0.1 -p "$PG_PORT" -U gateway -d postgres -qc "create database gateway" || fail "create database"

# 2. the stub identity provider
python3 "$here/oidc_stub.py" "$OIDC_PORT" >"$STATE/oidc.log" 2>&1 &
echo $! >"$STATE/oidc.pid"
for _ in $(seq 1 40); do
  curl -sf -o /dev/null "http://127.0.0.1:$OIDC_PORT/.well-known/openid-configuration" && break; sleep 0.25
done

# 3. the gateway, scratch HOME, cwd $STATE; loopback issuer and upstream need CLAUDE_GATEWAY_ALLOW_LOOPBACK=1
mkdir -p "$STATE/home"
sed -e "s|@GW_PORT@|$GW_PORT|; s|@OIDC_PORT@|$OIDC_PORT|; s|@PG_PORT@|$PG_PORT|; s|@UP_URL@|$UP_URL|" \
  "$here/gateway.yaml" >"$STATE/gateway.yaml"
(
  cd "$STATE" || exit 1
  export HOME="$STATE/home" CLAUDE_GATEWAY_ALLOW_LOOPBACK=1 DISABLE_AUTOUPDATER=1
  exec "$bin" gateway --config "$STATE/gateway.yaml"
) >"$STATE/gateway.log" 2>&1 &
echo $! >"$STATE/gateway.pid"
ready=0
for _ in $(seq 1 80); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$GW_PORT/.well-known/oauth-authorization-server")" = 200 ]; then
    ready=1; break
  fi
  kill -0 "$(cat "$STATE/gateway.pid")" 2>/dev/null || break
  sleep 0.25
done
[ $ready = 1 ] || fail "no answer on 127.0.0.1:$GW_PORT"

# 4. sign in (device flow through the stub IdP): the bearer token clients send
python3 "$here/signin.py" "http://127.0.0.1:$GW_PORT" >"$STATE/token" 2>"$STATE/signin.log" || fail "sign-in: $(cat "$STATE/signin.log")"
echo "claude-gateway ready pid=$(cat "$STATE/gateway.pid") port=$GW_PORT (oidc pid=$(cat "$STATE/oidc.pid") port=$OIDC_PORT, postgres port=$PG_PORT)"
