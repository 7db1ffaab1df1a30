#!/usr/bin/env bash
# Reproduce the stored verdicts of the peer gateways (implementations/<gateway>-<version>/<run>/): install each
# pinned peer into $PEERS (default /tmp/gc-peers), start it on loopback in front of the replay upstream certify serves
# on the peer's fixed port, certify each run with its model map (peers/<peer>/maps/<run>.yaml), the features its
# set-up supports and its implementation file, store the report, the results and each failure's exchange
# (peers/store_run.py, the peer's fake provider key scrubbed), stop the peer. Then regenerate the README's tables:
#   gateway-conformance report --implementations implementations --out implementations --readme README.md
#
#   usage: peers/certify.sh [PEER ...] [RUN ...]     (default: every peer, every run)
#   PEER: a folder peers/<name>/ with a peer.sh; RUN: a run name of its PEER_RUNS (anthropic, openai, ...).
#
# A peer is data: peers/<name>/peer.sh, sourced here, sets
#   PEER_VERSION       the pinned version (the stored runs' folder is implementations/<name>-<version>/)
#   PEER_REPLAY_PORT   the loopback port the replay upstream is served on (the peer's provider URLs point there)
#   PEER_URL, PEER_KEY the gateway's base URL and the key clients send it (peer_start may set them per set-up)
#   PEER_RUNS          one line per run: "RUN PROFILE SETUP IMPLEMENTATION-FILE FEATURE..."; a FEATURE word
#                      rule=GLOB instead judges only the rules matching GLOB (a set-up made for some features,
#                      whose other verdicts would be the set-up's, not the gateway's)
#   peer_install       installs the pinned peer into $PEERS/<name> unless it is there
#   peer_start SETUP   starts it on loopback for one set-up; peer_stop SETUP stops what peer_start started
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
PEERS=${PEERS:-/tmp/gc-peers}; mkdir -p "$PEERS"; PEERS=$(cd "$PEERS" && pwd); export PEERS
cd "$root"
all_peers=(); for d in "$here"/*/peer.sh; do all_peers+=("$(basename "$(dirname "$d")")"); done
peers=(); runs=()
for a in "$@"; do
  if [ -f "$here/$a/peer.sh" ]; then peers+=("$a"); else runs+=("$a"); fi
done
[ ${#peers[@]} -gt 0 ] || peers=("${all_peers[@]}")
# every RUN asked for must be a run of some selected peer: a typo never reruns nothing and says it passed
for r in "${runs[@]+"${runs[@]}"}"; do
  found=0
  for p in "${peers[@]}"; do
    # shellcheck disable=SC1090
    ( source "$here/$p/peer.sh"; for line in "${PEER_RUNS[@]}"; do [ "${line%% *}" = "$r" ] && exit 0; done; exit 1 ) && found=1
  done
  [ $found = 1 ] || { echo "unknown run $r for peers ${peers[*]} (peers: ${all_peers[*]})" >&2; exit 3; }
done
wanted() { local r; [ ${#runs[@]} -eq 0 ] && return 0; for r in "${runs[@]}"; do [ "$r" = "$1" ] && return 0; done; return 1; }

certify_peer() (  # a subshell per peer: its peer.sh's names never reach the next one
  local name=$1 line run profile setup impl features tmp started=""
  PEER_HERE="$here/$name"
  # shellcheck disable=SC1090
  source "$PEER_HERE/peer.sh"
  trap '[ -n "$started" ] && peer_stop "$started" >/dev/null 2>&1 || true' EXIT
  peer_install
  # the set-ups in the order their first run appears, each started once
  local setups=()
  for line in "${PEER_RUNS[@]}"; do
    read -r run profile setup _ <<<"$line"
    wanted "$run" || continue
    [[ " ${setups[*]-} " == *" $setup "* ]] || setups+=("$setup")
  done
  for s in "${setups[@]+"${setups[@]}"}"; do
    peer_start "$s"; started=$s
    for line in "${PEER_RUNS[@]}"; do
      read -r run profile setup impl features <<<"$line"
      [ "$setup" = "$s" ] && wanted "$run" || continue
      tmp="$PEERS/$name-$run-report"; rm -rf "$tmp"
      flags=(); read -r -a words <<<"$features"  # not `for f in $features`: a rule GLOB would be expanded
      for f in "${words[@]+"${words[@]}"}"; do
        case "$f" in rule=*) flags+=(--rule "${f#rule=}") ;; *) flags+=(--feature "$f") ;; esac
      done
      echo "== $name $PEER_VERSION: $run (profile $profile, set-up $s)"
      GC_GATEWAY_KEY=$PEER_KEY python3 -m harness.cli certify --gateway-url "$PEER_URL" --profile "$profile" \
        --replay-port "$PEER_REPLAY_PORT" --model-map "$PEER_HERE/maps/$run.yaml" "${flags[@]+"${flags[@]}"}" \
        --implementation "$PEER_HERE/$impl" --report-dir "$tmp" || true
      python3 "$here/store_run.py" "$tmp" "$profile" "implementations/$name-$PEER_VERSION/$run"
    done
    peer_stop "$s"; started=""
  done
)
for p in "${peers[@]}"; do certify_peer "$p"; done
