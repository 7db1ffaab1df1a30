#!/usr/bin/env bash
# Issue 20: one judgment for replay and live. LiteLLM's proxy is judged twice on profile ezat, once in front of the
# replay upstream and once in front of the live-provider simulator (`--upstream live`), and the variants that fail
# live but pass (or warn) in replay are listed: each is a live form that assumes what a model does, or a check
# live applies that replay does not. Not a test: a measurement; everything on loopback.
#   LITELLM=/path/to/venv/bin/litellm OUT=/tmp/ll20 bash benchmarks/litellm_live_vs_replay.sh
set -uo pipefail
LITELLM=${LITELLM:?the litellm command of a venv with litellm[proxy]}
OUT=${OUT:-/tmp/gc-litellm-live-vs-replay}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
free() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
run_litellm() {  # $1 upstream base, $2 port, $3 log
  cat > "$OUT"/litellm-$2.yaml <<YAML
model_list:
  - model_name: claude-sonnet-5-5
    litellm_params: {model: anthropic/claude-sonnet-5-5, api_base: "$1", api_key: gc-replay-upstream-key}
litellm_settings: {telemetry: false, drop_params: true}
general_settings: {master_key: sk-gc-litellm}
YAML
  LITELLM_LOG=ERROR "$LITELLM" --config "$OUT"/litellm-$2.yaml --host 127.0.0.1 --port $2 --num_workers 1 > $3 2>&1 &
  echo $!
}
wait_up() { for i in $(seq 1 240); do curl -s -o /dev/null http://127.0.0.1:$1/health/liveliness && return 0; sleep 1; done; return 1; }
echo "MODEL: claude-sonnet-5-5" > "$OUT"/model-map.yaml
RP=$(free); SP=$(free); L1=$(free); L2=$(free)
python3 -m harness.cli serve-upstream --port $RP > "$OUT"/replay.log 2>&1 & RPID=$!
python3 -m harness.cli serve-upstream --simulate --port $SP > "$OUT"/sim.log 2>&1 & SPID=$!
A=$(run_litellm http://127.0.0.1:$RP $L1 "$OUT"/litellm1.log)
B=$(run_litellm http://127.0.0.1:$SP $L2 "$OUT"/litellm2.log)
trap 'kill $RPID $SPID $A $B 2>/dev/null || true' EXIT
wait_up $L1 && wait_up $L2 || { echo "litellm did not start"; exit 2; }
timeout 1200 python3 -m pytest -p no:cacheprovider -q --gateway-url http://127.0.0.1:$L1/v1 --gateway-key sk-gc-litellm \
  --profile ezat --model-map "$OUT"/model-map.yaml --replay-url http://127.0.0.1:$RP --report-json "$OUT"/replay.json -n 2 specs/ezat > "$OUT"/replay.out 2>&1
timeout 1200 python3 -m pytest -p no:cacheprovider -q --gateway-url http://127.0.0.1:$L2/v1 --gateway-key sk-gc-litellm \
  --profile ezat --model-map "$OUT"/model-map.yaml --upstream live --report-json "$OUT"/live.json -n 2 specs/ezat > "$OUT"/live.out 2>&1
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
key = lambda r: (r["rule_id"], json.dumps(r["variant"], sort_keys=True))
replay = {key(r): r["outcome"] for r in json.load(open(f"{out}/replay.json"))["results"]}
live = {key(r): r["outcome"] for r in json.load(open(f"{out}/live.json"))["results"]}
only = sorted(k for k, o in live.items() if o == "FAIL" and replay.get(k) in ("PASS", "WARN"))
print(f"{len(live)} variants; fail live but pass or warn in replay: {len(only)}")
for rule, variant in only:
    print(f"  {rule} {variant}")
PY
