#!/usr/bin/env bash
# The steps of the repository's GitHub Action (action.yml), one per subcommand, each reading the action's inputs
# from INPUT_* variables as the action passes them, so a test (tests/harness/cli/test_action.py) runs the same
# script as CI does:
#
#   install    pip install the suite (INPUT_SUITE: a pip requirement; default the action's own checkout)
#   upstream   serve the replay upstream on 127.0.0.1:INPUT_REPLAY_PORT in the background, wait until it answers
#   gateway    start INPUT_GATEWAY_COMMAND in the background (when given), wait for INPUT_GATEWAY_HEALTH_URL
#   certify    certify with the inputs into INPUT_REPORT_DIR; summary.md to the job summary; its exit code is
#              the step's (0 as expected, 1 failures or regressions, 2 harness, 3 configuration, 5 nothing judged)
#   stop       stop what upstream and gateway started (by the pids they wrote)
#
# A first run works without an expectations file: INPUT_EXPECTATIONS naming a file that does not exist yet is said
# (a notice) and a draft is written into the report folder instead (expectations-draft.yaml) to edit and commit.
set -euo pipefail

step="${1:?usage: certify.sh install|upstream|gateway|certify|stop}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gateway-conformance-action"
report_dir="${INPUT_REPORT_DIR:-gc-report}"
replay_port="${INPUT_REPLAY_PORT:-9100}"
python="${INPUT_PYTHON:-python3}"
mkdir -p "$state"

notice() { echo "::notice::$*"; }

wait_for() {  # URL, what, seconds: poll until it answers (any HTTP status), or fail saying what did not
  "$python" - "$1" "$2" "${3:-30}" <<'PY'
import sys, time, urllib.error, urllib.request
url, what, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
deadline = time.monotonic() + limit
while True:
    try:
        urllib.request.urlopen(url, timeout=2).close()
        break
    except urllib.error.HTTPError:
        break  # it answered
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(f"{what} did not answer at {url} within {limit:g}s")
        time.sleep(0.2)
print(f"{what} answers at {url}")
PY
}

case "$step" in
  install)
    "$python" -m pip install --quiet --disable-pip-version-check "${INPUT_SUITE:-$here}"
    gateway-conformance --version
    ;;
  upstream)
    gateway-conformance serve-upstream --port "$replay_port" >"$state/upstream.log" 2>&1 &
    echo $! >"$state/upstream.pid"
    wait_for "http://127.0.0.1:$replay_port/__gc/health" "the replay upstream" 30
    ;;
  gateway)
    if [ -z "${INPUT_GATEWAY_COMMAND:-}" ]; then
      echo "no gateway-command: the gateway under test is started by an earlier step"
    else
      # The gateway's own command, as the user wrote it; GC_REPLAY_URL is where its providers are.
      # In a session of its own, so that `stop` ends the gateway with everything its command started.
      GC_REPLAY_URL="http://127.0.0.1:$replay_port" setsid bash -c "$INPUT_GATEWAY_COMMAND" >"$state/gateway.log" 2>&1 &
      echo $! >"$state/gateway.pid"
    fi
    if [ -n "${INPUT_GATEWAY_HEALTH_URL:-}" ]; then
      wait_for "$INPUT_GATEWAY_HEALTH_URL" "the gateway" "${INPUT_GATEWAY_WAIT:-60}" || {
        echo "its log:"; tail -n 40 "$state/gateway.log" 2>/dev/null || true; exit 1; }
    fi
    ;;
  certify)
    args=(certify --gateway-url "${INPUT_GATEWAY_URL:?gateway-url is required}" --profile "${INPUT_PROFILE:?profile is required}"
          --replay-url "http://127.0.0.1:$replay_port" --report-dir "$report_dir")
    [ -n "${INPUT_MODEL_MAP:-}" ] && args+=(--model-map "$INPUT_MODEL_MAP")
    for feature in ${INPUT_FEATURES:-}; do args+=(--feature "$feature"); done
    if [ -n "${INPUT_EXPECTATIONS:-}" ]; then
      if [ -f "$INPUT_EXPECTATIONS" ]; then
        args+=(--expectations "$INPUT_EXPECTATIONS")
      else
        notice "no expectations file at $INPUT_EXPECTATIONS yet: this run drafts one ($report_dir/expectations-draft.yaml); fill in each reason, ticket and expiry and commit it there"
        args+=(--write-expectations "$state/expectations-draft.yaml")
      fi
    fi
    if [ -n "${INPUT_BASELINE:-}" ]; then
      if [ -e "$INPUT_BASELINE" ]; then
        args+=(--baseline "$INPUT_BASELINE")
      else
        notice "no baseline at $INPUT_BASELINE yet: this run is judged on its own (keep its report folder as the next run's baseline)"
      fi
    fi
    [ -n "${INPUT_CLIENTS:-}" ] && args+=(--clients "$INPUT_CLIENTS")
    # shellcheck disable=SC2206  # extra arguments are words, as the user wrote them
    [ -n "${INPUT_ARGS:-}" ] && args+=(${INPUT_ARGS})
    code=0
    GC_GATEWAY_KEY="${INPUT_GATEWAY_KEY:-${GC_GATEWAY_KEY:-}}" gateway-conformance "${args[@]}" || code=$?
    if [ -f "$state/expectations-draft.yaml" ] && [ -d "$report_dir" ]; then
      mv "$state/expectations-draft.yaml" "$report_dir/expectations-draft.yaml"
    fi
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$report_dir/summary.md" ]; then
      cat "$report_dir/summary.md" >>"$GITHUB_STEP_SUMMARY"
    fi
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
      { echo "exit-code=$code"; echo "report-dir=$report_dir"; echo "summary=$report_dir/summary.md"; } >>"$GITHUB_OUTPUT"
    fi
    exit "$code"
    ;;
  stop)
    for name in gateway upstream; do
      if [ -f "$state/$name.pid" ]; then
        pid="$(cat "$state/$name.pid")"
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
        rm -f "$state/$name.pid"
      fi
    done
    ;;
  *)
    echo "unknown step: $step" >&2
    exit 3
    ;;
esac
