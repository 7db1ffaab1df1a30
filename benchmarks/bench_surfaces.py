"""Every surface of the reference gateway beside LiteLLM's and Portkey's, in one run, as ratios (issue 47, item 6).

    python3 benchmarks/bench_surfaces.py [--seconds 3] [--rounds 2] [--json benchmarks/results/surfaces.json]
        [--litellm /tmp/gc-peers/litellm/bin/litellm] [--portkey /tmp/gc-peers/portkey]

For each surface, non-streaming and streaming (a 20-event stream), each gateway's throughput over 8 keep-alive
connections and its median on one connection, beside the direct call to the fake upstream of the same surface
(benchmarks/fake_upstream.py: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses) in the same run:

| surface | reference gateway | LiteLLM 1.110.2 | Portkey 1.15.2 | direct |
|---|---|---|---|---|
| chat | ezat, `/openai/v1/chat/completions` over Anthropic | an `anthropic/` model | provider anthropic | `/v1/messages` |
| messages (pass-through) | ezat, `/openai/v1/messages`, an Anthropic model | its `/v1/messages`, an `anthropic/` model | its `/v1/messages`, provider anthropic | `/v1/messages` |
| messages (bridge) | lyrouter, `/v1/messages`, gpt-4.1 over Chat Completions | its `/v1/messages`, an `openai/` model | its `/v1/messages`, provider openai | `/v1/chat/completions` |
| responses (bridge) | ezat, `/openai/v1/responses` over Anthropic (kept in its SQLite store, as by default) | its `/v1/responses`, an `anthropic/` model | provider anthropic (its gateway has no such path: refused) | `/v1/messages` |
| responses (native) | lyrouter, `/v1/responses`, gpt-5.5 passed on | its `/v1/responses`, an `openai/` model | provider openai | `/v1/responses` |

The processes as in bench_peers.py: upstream, each gateway and the load client apart; with `taskset`, the gateways
on core 1, upstream and client on core 0. All gateways run throughout; each (surface, stream) takes `--rounds`
turns in a rotating order, each figure the best of its turns. A gateway that does not answer a surface with a 200
is reported as not serving it (its status), not timed. Added latency = the gateway's median minus the direct
call's. Peers are used as installed by peers/*/install.sh (Portkey with the loopback preload of
peers/portkey/peer-preload.mjs, so it binds 127.0.0.1 only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import Conn, build, client_process, free_port, pinned, stop, throughput, wait_port

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-bench"
TEXT = "Say something. events=20 gap_ms=0"

# surface -> (the direct call's path and body, the body for a gateway given its model)
SURFACES: dict[str, dict[str, Any]] = {
    "chat": {"direct": "/v1/messages", "kind": "anthropic", "path": "/chat/completions"},
    "messages-pass": {"direct": "/v1/messages", "kind": "anthropic", "path": "/messages"},
    "messages-bridge": {"direct": "/v1/chat/completions", "kind": "chat", "path": "/messages"},
    "responses-bridge": {"direct": "/v1/messages", "kind": "anthropic", "path": "/responses"},
    "responses-native": {"direct": "/v1/responses", "kind": "responses", "path": "/responses"},
    # the same with `store: false`: the reference gateway keeps no copy (Portkey and LiteLLM never keep one)
    "responses-native-unkept": {"direct": "/v1/responses", "kind": "responses", "path": "/responses"},
}


def body_for(kind: str, model: str, stream: bool) -> dict[str, Any]:
    """The request body of one API (anthropic: Messages, chat: Chat Completions, responses: Responses)."""
    if kind == "anthropic":
        return {
            "model": model,
            "max_tokens": 200,
            "stream": stream,
            "messages": [{"role": "user", "content": TEXT}],
        }
    if kind == "chat":
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": 200,
            "messages": [{"role": "user", "content": TEXT}],
        }
    else:
        body = {"model": model, "max_output_tokens": 200, "input": TEXT}
    if stream:
        body["stream"] = True
    return body


def surface_body(surface: str, model: str, stream: bool) -> dict[str, Any]:
    """A gateway's request on `surface`: the API the client speaks there."""
    if surface == "chat":
        return body_for("chat", model, stream)
    if surface.startswith("messages"):
        return body_for("anthropic", model, stream)
    body = body_for("responses", model, stream)
    if surface.endswith("-unkept"):
        body["store"] = False
    return body


async def client_main(spec: dict[str, Any]) -> dict[str, Any]:
    host, port = "127.0.0.1", spec["port"]
    raw = build(host, port, spec["path"], spec["body"], spec["headers"])
    conn = Conn(host, port)
    status, size = await conn.request(raw)
    if status != 200:
        return {"status": status}
    for _ in range(30):
        status, size = await conn.request(raw)
    samples = []
    for _ in range(spec["latency_n"]):
        t = time.perf_counter()
        await conn.request(raw)
        samples.append(time.perf_counter() - t)
    out: dict[str, Any] = {"status": 200, "bytes": size, "median_ms": statistics.median(samples) * 1000}
    out.update(await throughput(host, port, raw, spec["seconds"], spec.get("pid")))
    return out


def run_client(spec: dict[str, Any]) -> dict[str, Any]:
    cmd = pinned([sys.executable, __file__, "--client", json.dumps(spec)], 0)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"client failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _litellm_config(path: Path, upstream: str) -> None:
    path.write_text(
        "model_list:\n"
        "  - model_name: bench-anthropic\n    litellm_params:\n      model: anthropic/claude-sonnet-5-5\n"
        f"      api_base: {upstream}\n      api_key: {KEY}\n"
        "  - model_name: bench-openai\n    litellm_params:\n      model: openai/gpt-4.1\n"
        f"      api_base: {upstream}/v1\n      api_key: {KEY}\n"
        "  - model_name: bench-responses\n    litellm_params:\n      model: openai/gpt-5.5\n"
        f"      api_base: {upstream}/v1\n      api_key: {KEY}\n"
        "litellm_settings:\n  telemetry: false\n  drop_params: true\n"
        f"general_settings:\n  master_key: {KEY}\n"
    )


def gateways(args: argparse.Namespace, upstream: str, tmp: Path) -> list[dict[str, Any]]:
    """Each gateway process: its command, port, base path, and per surface the model and headers."""
    out: list[dict[str, Any]] = []
    for profile in ("ezat", "lyrouter"):
        port = free_port()
        cmd = [sys.executable, "-m", "reference_gateway", "--profile", profile, "--upstream-url", upstream,
               "--port", str(port), "--api-key", KEY, "--upstream-key", KEY, "--openai-upstream-key", KEY,
               "--state-url", f"sqlite:///{tmp}/{profile}-state.sqlite3", *args.reference_arg]  # fmt: skip
        out.append({"name": f"reference-{profile}", "cmd": cmd, "port": port, "env": {}})
    if Path(args.litellm).exists():
        port = free_port()
        config = tmp / "litellm.yaml"
        _litellm_config(config, upstream)
        cmd = [
            args.litellm,
            "--config",
            str(config),
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--num_workers",
            "1",
        ]
        out.append({"name": "litellm", "cmd": cmd, "port": port, "env": {"LITELLM_LOG": "ERROR"}})
    start = Path(args.portkey) / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"
    preload = ROOT / "peers" / "portkey" / "peer-preload.mjs"
    if start.exists() and shutil.which("node"):
        port = free_port()
        cmd = ["node", "--import", str(preload), str(start), f"--port={port}", "--headless"]
        out.append({"name": "portkey", "cmd": cmd, "port": port, "env": {"PEER_BIND_HOST": "127.0.0.1"}})
    return out


def route(gateway: str, surface: str, upstream: str) -> tuple[str, str, dict[str, str]] | None:
    """(path, model, headers) of `surface` on `gateway`; None: the gateway has no such route to try."""
    auth = {"Authorization": f"Bearer {KEY}"}
    tail = SURFACES[surface]["path"]
    if gateway == "reference-ezat":
        if surface == "messages-bridge" or surface.startswith("responses-native"):
            return None
        return "/openai/v1" + tail, "anthropic/claude-sonnet-5-5", auth
    if gateway == "reference-lyrouter":
        if surface == "messages-bridge":
            return "/v1" + tail, "gpt-4.1", auth
        if surface.startswith("responses-native"):
            return "/v1" + tail, "gpt-5.5", auth
        return None
    if gateway == "litellm":
        model = "bench-openai" if surface == "messages-bridge" else "bench-anthropic"
        if surface.startswith("responses-native"):
            model = "bench-responses"
        return "/v1" + tail, model, auth
    provider = (
        "openai" if surface == "messages-bridge" or surface.startswith("responses-native") else "anthropic"
    )
    model = {"messages-bridge": "gpt-4.1"}.get(
        surface, "gpt-5.5" if provider == "openai" else "claude-sonnet-5-5"
    )
    headers = {**auth, "x-portkey-provider": provider, "x-portkey-custom-host": f"{upstream}/v1"}
    if provider == "anthropic":
        headers["x-api-key"] = KEY
    return "/v1" + tail, model, headers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="throughput window per measurement")
    ap.add_argument("--latency-n", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--surfaces", nargs="*", default=list(SURFACES), choices=list(SURFACES))
    ap.add_argument("--litellm", default="/tmp/gc-peers/litellm/bin/litellm")
    ap.add_argument("--portkey", default="/tmp/gc-peers/portkey")
    ap.add_argument("--reference-arg", action="append", default=[], metavar="ARG")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--table", metavar="JSON", help="print the table of an earlier run's --json and exit")
    ap.add_argument("--serve-upstream", metavar="PORT_FILE", help=argparse.SUPPRESS)
    ap.add_argument("--client", metavar="SPEC", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return 0
    if args.client:
        return client_process(client_main, args.client)
    tmp = Path(tempfile.mkdtemp(prefix="gc-surfaces-"))
    port_file = tmp / "upstream.port"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen[Any]] = []
    results: dict[str, Any] = {"cores": os.cpu_count(), "pinning": bool(shutil.which("taskset")),
                               "seconds": args.seconds, "rounds": args.rounds, "reference_args": args.reference_arg,
                               "stream_events": 20, "measured": {}, "skipped": {}}  # fmt: skip
    try:
        up = subprocess.Popen(pinned([sys.executable, str(ROOT / "benchmarks" / "bench_peers.py"), "--serve-upstream",
                                      str(port_file)], 0), env=env, start_new_session=True)  # fmt: skip
        procs.append(up)
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline:
                raise RuntimeError("the fake upstream did not start")
            time.sleep(0.05)
        uport = int(port_file.read_text())
        wait_port(uport, up)
        upstream = f"http://127.0.0.1:{uport}"
        running: list[dict[str, Any]] = []
        for gateway in gateways(args, upstream, tmp):
            print(f"starting {gateway['name']} ...", flush=True)
            log = (tmp / f"{gateway['name']}.log").open("wb")
            proc = subprocess.Popen(pinned(gateway["cmd"], 1), env={**env, **gateway["env"]}, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
            procs.append(proc)
            try:
                wait_port(gateway["port"], proc, 120)
            except RuntimeError as exc:
                results["skipped"][gateway["name"]] = f"did not start: {exc}"
                continue
            running.append({**gateway, "pid": proc.pid})
        time.sleep(1.0)
        for surface in args.surfaces:
            for stream in (False, True):
                key = f"{surface}{'-stream' if stream else ''}"
                kind = SURFACES[surface]["kind"]
                direct_model = {"anthropic": "claude-sonnet-5-5", "chat": "gpt-4.1", "responses": "gpt-5.5"}[
                    kind
                ]
                specs: list[tuple[str, dict[str, Any]]] = [("direct", {
                    "port": uport, "path": SURFACES[surface]["direct"], "body": body_for(kind, direct_model, stream),
                    "headers": {"x-api-key": KEY, "anthropic-version": "2023-06-01", "Authorization": f"Bearer {KEY}"},
                })]  # fmt: skip
                for gateway in running:
                    found = route(gateway["name"], surface, upstream)
                    if found is None:
                        continue
                    path, model, headers = found
                    if surface.startswith("messages"):
                        headers = {**headers, "anthropic-version": "2023-06-01"}
                    specs.append((gateway["name"], {"port": gateway["port"], "path": path, "pid": gateway["pid"],
                                                    "body": surface_body(surface, model, stream), "headers": headers}))  # fmt: skip
                turns: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in specs}
                for index in range(args.rounds):
                    shift = index % len(specs)
                    for name, spec in specs[shift:] + specs[:shift]:
                        print(f"{key} round {index + 1}: {name} ...", flush=True)
                        try:
                            got = run_client({**spec, "seconds": args.seconds, "latency_n": args.latency_n})
                        except RuntimeError as exc:
                            got = {"status": 0, "error": str(exc)[-300:]}
                        turns[name].append(got)
                measured: dict[str, Any] = {}
                for name, got in turns.items():
                    served = [g for g in got if g.get("status") == 200]
                    if not served:
                        measured[name] = {
                            "served": False,
                            "status": got[0].get("status"),
                            "error": got[0].get("error"),
                        }
                        continue
                    best = {"served": True, "rps": max(g["rps"] for g in served),
                            "median_ms": min(g["median_ms"] for g in served), "bytes": served[0]["bytes"]}  # fmt: skip
                    cpu = [g["cpu_us_per_request"] for g in served if "cpu_us_per_request" in g]
                    if cpu:
                        best["cpu_us_per_request"] = min(cpu)
                    measured[name] = best
                results["measured"][key] = {"best": measured, "turns": turns}
                print(table({"measured": {key: results["measured"][key]}}), flush=True)
    finally:
        for proc in procs:
            stop(proc)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def table(results: dict[str, Any]) -> str:
    lines = ["| surface | gateway | rps, 8 conns | x Portkey | median added, 1 conn | Portkey's added | CPU µs / request |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for key, found in results["measured"].items():
        best = found["best"]
        direct = best.get("direct", {})
        portkey = best.get("portkey", {})
        for name, got in best.items():
            if name == "direct":
                continue
            if not got.get("served"):
                lines.append(f"| {key} | {name} | not served ({got.get('status')}) | | | | |")
                continue
            added = got["median_ms"] - direct.get("median_ms", 0.0)
            ratio = f"{got['rps'] / portkey['rps']:.2f}" if portkey.get("served") else "—"
            padded = (
                f"+{portkey['median_ms'] - direct.get('median_ms', 0.0):.2f}"
                if portkey.get("served")
                else "—"
            )
            cpu = f"{got['cpu_us_per_request']:.0f}" if "cpu_us_per_request" in got else "—"
            lines.append(
                f"| {key} | {name} | {got['rps']:.0f} | {ratio} | +{added:.2f} ms | {padded} | {cpu} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
