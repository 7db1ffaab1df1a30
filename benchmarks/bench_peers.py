"""The reference gateway beside its peers, on one fake Anthropic upstream, as ratios to the direct call.

    python3 benchmarks/bench_peers.py [--seconds 5] [--rounds 3] [--json benchmarks/results/peers.json]
        [--litellm /work/wt/venv-litellm/bin/litellm] [--portkey /work/wt/portkey] [--workers 1]
        [--reference-arg=--log-level --reference-arg=warning]

The reference gateway runs at its default settings (log level `info`: one line per request) unless
`--reference-arg` says otherwise. Every gateway is started first and runs throughout; the direct call and the
gateways then take `--rounds` turns in a rotating order, and each figure is the best of its rounds (on a
shared machine the least disturbed; every round is kept in the JSON under `rounds`).

Three kinds of process, each on its own: the fake upstream (`--serve-upstream`), each gateway under test
(the reference gateway; LiteLLM's proxy and Portkey's gateway when installed), and the load client
(`--client`: a minimal HTTP/1.1 keep-alive client on raw sockets, so that the client is not what is
measured). With `taskset` available the gateway gets core 1 and the upstream and client share core 0.

Measured, each beside the direct call to the upstream in the same run:
- non-streaming: throughput over 8 keep-alive connections; the median on one connection (added ms);
- streaming: the first content chunk, timed from the moment the upstream wrote its first content event
  (the event carries the upstream's CLOCK_MONOTONIC time; client and upstream share the host's clock);
  the whole of a 100-event stream (added ms); the gateway's resident memory across a 10,000-event stream;
- the gateway's own CPU time (user + system, from /proc, its child processes included) per request of the
  throughput window and per 100-event stream: on a loaded machine the figure its load changes least.

The fake upstream answers from the request alone: the last user message says `events=N gap_ms=G`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script from anywhere: its own folder first, for the fake upstream (also read by bench_cpu.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_upstream import serve_upstream

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-bench"
MODEL = "anthropic/claude-sonnet-5-5"

# --- the load client: raw HTTP/1.1 keep-alive ---------------------------------------------------------


class Conn:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def request(self, raw: bytes, on_data: Any = None) -> tuple[int, int]:
        """Send one request; read the whole answer; `on_data(bytes)` sees each body piece. (status, bytes)."""
        for attempt in (1, 2):  # a kept-alive connection the server closed while idle: reconnect once
            if self.writer is None:
                await self.open()
            assert self.reader is not None and self.writer is not None
            self.writer.write(raw)
            try:
                head = await self.reader.readuntil(b"\r\n\r\n")
                break
            except (asyncio.IncompleteReadError, ConnectionResetError):
                self.writer.close()
                self.writer = None
                if attempt == 2:
                    raise
        status = int(head.split(b" ", 2)[1])
        lower = head.lower()
        total = 0
        m = re.search(rb"\r\ncontent-length: *(\d+)", lower)
        if m:
            data = await self.reader.readexactly(int(m.group(1)))
            total = len(data)
            if on_data:
                on_data(data)
        elif b"transfer-encoding: chunked" in lower:
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                data = await self.reader.readexactly(size + 2)
                total += size
                if on_data:
                    on_data(data[:-2])
        else:  # until close
            while data := await self.reader.read(65536):
                total += len(data)
                if on_data:
                    on_data(data)
            self.writer.close()
            self.writer = None
        if b"connection: close" in lower and self.writer is not None:
            self.writer.close()
            self.writer = None
        return status, total


def build(host: str, port: int, path: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    data = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and its children so far, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    with contextlib.suppress(OSError):
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / tick


def rss_kb(pid: int) -> int:
    """Resident memory of a process and its children (kB), from /proc."""
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


async def throughput(host: str, port: int, raw: bytes, seconds: float, pid: int | None) -> dict[str, float]:
    """Closed loop over 8 connections for `seconds`: requests a second and, given the gateway's pid, its own CPU a
    request (what the machine's other load changes least)."""
    conns = [Conn(host, port) for _ in range(8)]
    for c in conns:
        await c.request(raw)
    done = 0
    stop_at = time.perf_counter() + seconds

    async def loop(c: Conn) -> None:
        nonlocal done
        while time.perf_counter() < stop_at:
            await c.request(raw)
            done += 1

    cpu0 = cpu_seconds(pid) if pid else 0.0
    t0 = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in conns))
    out = {"rps": done / (time.perf_counter() - t0)}
    if pid:
        out["cpu_us_per_request"] = (cpu_seconds(pid) - cpu0) / done * 1e6
    return out


async def client_main(spec: dict[str, Any]) -> dict[str, Any]:
    host, port, path = spec["host"], spec["port"], spec["path"]
    body, headers = spec["body"], spec["headers"]

    def req(stream: bool, events: int = 0, gap: int = 0) -> bytes:
        b = json.loads(json.dumps(body))
        b["stream"] = stream
        b["messages"][-1]["content"] = f"Say something. events={events} gap_ms={gap}"
        return build(host, port, path, b, headers)

    out: dict[str, Any] = {}
    plain = req(False)
    conn = Conn(host, port)
    for _ in range(50):  # warm-up (connections, caches, JITs)
        status, _n = await conn.request(plain)
    out["status"] = status
    # median on one connection
    samples = []
    for _ in range(spec["latency_n"]):
        t = time.perf_counter()
        await conn.request(plain)
        samples.append(time.perf_counter() - t)
    out["median_ms"] = statistics.median(samples) * 1000
    cpu_pid = spec.get("cpu_pid")
    out.update(await throughput(host, port, plain, spec["seconds"], cpu_pid))
    # streaming: first content chunk after the upstream wrote it
    firsts = []
    for _ in range(spec["stream_n"]):
        seen: list[int] = []

        def on_data(data: bytes, seen: list[int] = seen) -> None:
            if not seen:
                m = re.search(rb"t=(\d+)", data)
                if m:
                    seen.append(time.monotonic_ns() - int(m.group(1)))

        await conn.request(req(True, 5, 20), on_data)
        if seen:
            firsts.append(seen[0] / 1e6)
    out["first_chunk_ms"] = statistics.median(firsts) if firsts else None
    # streaming: a whole 100-event stream
    totals = []
    hundred = req(True, 100, 0)
    cpu0 = cpu_seconds(cpu_pid) if cpu_pid else 0.0
    for _ in range(spec["stream_n"]):
        t = time.perf_counter()
        _s, size = await conn.request(hundred)
        totals.append(time.perf_counter() - t)
    if cpu_pid:
        out["cpu_us_per_stream100"] = (cpu_seconds(cpu_pid) - cpu0) / spec["stream_n"] * 1e6
    out["stream100_ms"] = statistics.median(totals) * 1000
    out["stream100_bytes"] = size
    # memory across a 10,000-event stream (the gateway's pid, when given)
    pid = spec.get("pid")
    if pid:
        marks: dict[str, int] = {}
        count = [0]

        def on_big(data: bytes) -> None:
            count[0] += data.count(b"data:")
            for mark in (1000, 5000, 9000):
                if count[0] >= mark and str(mark) not in marks:
                    marks[str(mark)] = rss_kb(pid)

        marks["before"] = rss_kb(pid)
        await conn.request(req(True, 10_000, 0), on_big)
        marks["after"] = rss_kb(pid)
        out["rss_kb"] = marks
    return out


# --- orchestration ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pinned(cmd: list[str], core: int) -> list[str]:
    return (
        ["taskset", "-c", str(core), *cmd]
        if shutil.which("taskset") and os.cpu_count() and os.cpu_count() >= 2
        else cmd
    )  # type: ignore[operator]


def client_process(client_main: Any, spec: str) -> int:
    """The load client's process (`--client SPEC`): on uvloop where installed, its result as one JSON line."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    print(json.dumps(asyncio.run(client_main(json.loads(spec)))))
    return 0


def wait_port(port: int, proc: subprocess.Popen[Any], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"no listener on {port} after {timeout:g}s")


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run_client(spec: dict[str, Any]) -> dict[str, Any]:
    cmd = pinned([sys.executable, __file__, "--client", json.dumps(spec)], 0)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"client failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best_of(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The best of each figure over the rounds: the highest throughput, the lowest times, the memory measured."""
    best = dict(rounds[0])
    best["rps"] = max(r["rps"] for r in rounds)
    for key in ("median_ms", "stream100_ms", "first_chunk_ms", "cpu_us_per_request", "cpu_us_per_stream100"):
        values = [r[key] for r in rounds if r.get(key) is not None]
        best[key] = min(values) if values else None
    best["rounds"] = len(rounds)
    return best


def chat_body() -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 200, "messages": [{"role": "user", "content": "hi"}]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="throughput window per gateway")
    ap.add_argument("--latency-n", type=int, default=400)
    ap.add_argument("--stream-n", type=int, default=60)
    ap.add_argument("--workers", type=int, default=1, help="reference gateway worker processes")
    ap.add_argument("--rounds", type=int, default=3, help="turns each gateway (and the direct call) takes")
    ap.add_argument(
        "--reference-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra argument for the reference gateway (repeatable; default none: its default settings, "
        "e.g. --log-level info)",
    )
    ap.add_argument("--litellm", default="/tmp/gc-peers/litellm/bin/litellm")  # peers/litellm/install.sh
    ap.add_argument("--portkey", default="/tmp/gc-peers/portkey")  # peers/portkey/install.sh
    ap.add_argument(
        "--only", action="append", default=[], help="run only these gateways (reference, litellm, portkey)"
    )
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--table", metavar="JSON", help="print the table of an earlier run's --json and exit")
    ap.add_argument("--serve-upstream", metavar="PORT_FILE", help=argparse.SUPPRESS)
    ap.add_argument("--client", metavar="SPEC", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return 0
    if args.serve_upstream:
        serve_upstream(args.serve_upstream)
        return 0
    if args.client:
        return client_process(client_main, args.client)

    tmp = Path(tempfile.mkdtemp(prefix="gc-bench-"))
    port_file = tmp / "upstream.port"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs: list[subprocess.Popen[Any]] = []
    results: dict[str, Any] = {
        "cores": os.cpu_count(),
        "pinning": bool(shutil.which("taskset")),
        "reference_args": args.reference_arg,
        "gateways": {},
    }
    skipped: dict[str, str] = {}
    try:
        up = subprocess.Popen(
            pinned([sys.executable, __file__, "--serve-upstream", str(port_file)], 0),
            env=env,
            start_new_session=True,
        )
        procs.append(up)
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline:
                raise RuntimeError("the fake upstream did not start")
            time.sleep(0.05)
        uport = int(port_file.read_text())
        wait_port(uport, up)
        upstream = f"http://127.0.0.1:{uport}"
        direct = {
            "host": "127.0.0.1",
            "port": uport,
            "path": "/v1/messages",
            "headers": {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
            "body": {
                "model": "claude-sonnet-5-5",
                "max_tokens": 200,
                "messages": [{"role": "user", "content": "hi"}],
            },
            "seconds": args.seconds,
            "latency_n": args.latency_n,
            "stream_n": args.stream_n,
        }
        gateways = []
        gport = free_port()
        gateways.append(
            (
                "reference",
                [
                    sys.executable,
                    "-m",
                    "reference_gateway",
                    "--profile",
                    "ezat",
                    "--upstream-url",
                    upstream,
                    "--port",
                    str(gport),
                    "--api-key",
                    KEY,
                    "--upstream-key",
                    KEY,
                    *args.reference_arg,
                    "--workers",
                    str(args.workers),
                ],
                gport,
                "/openai/v1/chat/completions",
                MODEL,
                {},
            )
        )
        if Path(args.litellm).exists():
            lport = free_port()
            cfg = tmp / "litellm.yaml"
            cfg.write_text(
                "model_list:\n  - model_name: bench\n    litellm_params:\n      model: anthropic/claude-sonnet-5-5\n"
                f"      api_base: {upstream}\n      api_key: {KEY}\n"
                "litellm_settings:\n  telemetry: false\n  drop_params: true\n"
                f"general_settings:\n  master_key: {KEY}\n"
            )
            gateways.append(
                (
                    "litellm",
                    [
                        args.litellm,
                        "--config",
                        str(cfg),
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(lport),
                        "--num_workers",
                        "1",
                    ],
                    lport,
                    "/v1/chat/completions",
                    "bench",
                    {},
                )
            )
        else:
            skipped["litellm"] = f"not installed ({args.litellm} missing)"
        start_server = (
            Path(args.portkey) / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"
        )
        if start_server.exists() and shutil.which("node"):
            pport = free_port()
            gateways.append(
                (
                    "portkey",
                    # the loopback preload (peers/portkey): Portkey's server names no host and would bind them all
                    [
                        "node",
                        "--import",
                        str(ROOT / "peers" / "portkey" / "peer-preload.mjs"),
                        str(start_server),
                        f"--port={pport}",
                        "--headless",
                    ],
                    pport,
                    "/v1/chat/completions",
                    "claude-sonnet-5-5",
                    {"x-portkey-provider": "anthropic", "x-portkey-custom-host": f"{upstream}/v1"},
                )
            )
        else:
            skipped["portkey"] = f"not installed ({start_server} missing or no node)"
        running: list[tuple[str, dict[str, Any]]] = [("direct", direct)]
        for name, cmd, port, path, model, extra in gateways:
            if args.only and name not in args.only:
                continue
            print(f"starting {name} ...", flush=True)
            log = (tmp / f"{name}.log").open("wb")
            proc = subprocess.Popen(
                pinned(cmd, 1),
                env={**env, "LITELLM_LOG": "ERROR"},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            procs.append(proc)
            try:
                wait_port(port, proc, 120)
            except RuntimeError as exc:
                skipped[name] = (
                    f"failed: {exc}; log tail: {(tmp / f'{name}.log').read_text(errors='replace')[-600:]}"
                )
                stop(proc)
                continue
            body = chat_body()
            body["model"] = model
            spec = {
                **direct,
                "port": port,
                "path": path,
                "body": body,
                "pid": proc.pid,
                "cpu_pid": proc.pid,
                "headers": {"Authorization": f"Bearer {KEY}", **extra},
            }
            running.append((name, spec))
        time.sleep(1.0)
        # Every gateway runs for the whole benchmark (an idle one costs nothing); the rounds take turns, in a
        # rotating order, so that a change in the machine's load falls on each alike; each figure is the
        # best of the rounds (the least disturbed).
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in running}
        for index in range(args.rounds):
            shift = index % len(running)
            for name, spec in running[shift:] + running[:shift]:
                if name in skipped:
                    continue
                print(f"round {index + 1}: {name} ...", flush=True)
                if index > 0:  # the 10,000-event memory stream once
                    spec = {k: v for k, v in spec.items() if k != "pid"}
                try:
                    rounds[name].append(run_client(spec))
                except RuntimeError as exc:
                    log_tail = (
                        (tmp / f"{name}.log").read_text(errors="replace")[-600:] if name != "direct" else ""
                    )
                    skipped[name] = f"failed: {exc}; log tail: {log_tail}"
        for name, measured in rounds.items():
            if name in skipped or not measured:
                continue
            if name == "direct":
                results["direct"] = best_of(measured)
            else:
                results["gateways"][name] = best_of(measured)
        results["rounds"] = rounds
    finally:
        for p in procs:
            stop(p)
    results["skipped"] = skipped
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def table(r: dict[str, Any]) -> str:
    d = r["direct"]
    lines = [
        f"cores: {r['cores']} ({'gateway pinned to core 1, upstream and client to core 0' if r['pinning'] else 'not pinned'})",
        "",
        "| | rps, 8 conns | x direct | median ms (1 conn) | added | first chunk ms | added | 100-event stream ms | added | gateway CPU µs / request | / 100-event stream | RSS kB before → @1k → @9k → after a 10,000-event stream |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| direct | {d['rps']:.0f} | 1.00 | {d['median_ms']:.2f} | — | {d['first_chunk_ms']:.2f} | — | {d['stream100_ms']:.2f} | — | — | — | — |",
    ]
    for name, g in r["gateways"].items():
        rss = g.get("rss_kb", {})
        mem = " → ".join(str(rss[k]) for k in ("before", "1000", "9000", "after") if k in rss) if rss else "—"
        first = g["first_chunk_ms"]
        first_text = "—" if first is None else f"{first:.2f}"
        first_added = "—" if first is None else f"+{first - d['first_chunk_ms']:.2f}"
        lines.append(
            f"| {name} | {g['rps']:.0f} | {g['rps'] / d['rps']:.2f} | {g['median_ms']:.2f} "
            f"| +{g['median_ms'] - d['median_ms']:.2f} | {first_text} | {first_added} "
            f"| {g['stream100_ms']:.2f} | +{g['stream100_ms'] - d['stream100_ms']:.2f} "
            f"| {_num(g.get('cpu_us_per_request'))} | {_num(g.get('cpu_us_per_stream100'))} | {mem} |"
        )
    ref = r["gateways"].get("reference")
    for peer in ("portkey", "litellm"):
        if ref and peer in r["gateways"]:
            other = r["gateways"][peer]
            line = f"\nreference / {peer} throughput: {ref['rps'] / other['rps']:.2f}x"
            if ref.get("cpu_us_per_request") and other.get("cpu_us_per_request"):
                line += f"; {peer} / reference CPU per request: {other['cpu_us_per_request'] / ref['cpu_us_per_request']:.2f}x"
            lines.append(line)
    for name, why in r.get("skipped", {}).items():
        lines.append(f"\nskipped {name}: {why}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
