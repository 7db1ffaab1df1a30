# Sourced by peers/*/run_peer.sh: what every peer's start/stop script does the same way.

# stop_pidfile FILE [SECONDS]: TERM the process FILE names, wait for it (default 5 s), then KILL; remove FILE.
stop_pidfile() {
  local file=$1 wait=${2:-5} pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 $((wait * 4))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null
  rm -f "$file"
}

# start_or_stop ARG: `stop` runs the script's own stop() and exits; `start` goes on to start the peer; else usage.
start_or_stop() {
  case "$1" in
    stop) stop; exit 0 ;;
    start) ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
  esac
}
