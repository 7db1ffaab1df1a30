"""The gateway's state stores at 10 to 10^6 kept responses: the cost of a request must not grow with the store (issue 47).

    python3 benchmarks/bench_state.py [--sizes 10 1000 100000 1000000] [--backends sqlite redis]
        [--tree DIR] [--gateway] [--json benchmarks/results/state.json]

Two measurements, each a ratio to the smallest store in the same run (the machine is shared; absolute times move):
- the store itself (`--backends`): a store prefilled with N kept responses (2 KB each, as kept Responses are; 1%
  of them expired), then what `/v1/responses` does to it per request — keep one response and load one — timed
  over a few seconds; the median of each, and its ratio to N=10. `--tree DIR` imports the store from another
  checkout (`git worktree add DIR <older commit>`) to measure it the same way.
- `--gateway`: the reference gateway (ezat, its SQLite store at `--state-url`) in front of the fake Anthropic
  upstream of benchmarks/fake_upstream.py, `POST /openai/v1/responses` (kept: `store` is true by default),
  throughput over 8 connections and the median on one, with an empty store and with the largest prefilled one.
  The goal: the largest within 10% of the empty store.

redis-server must be on PATH for the Redis backend (Debian: apt-get install redis-server); it is started on a free
loopback port, without persistence, and stopped by its pid.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import wait_port  # the benchmarks' shared helpers, beside this file

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-bench"
PREFIX = "responses:"
EXPIRED_SHARE = 0.01
KEPT = 30 * 24 * 3600


def record() -> bytes:
    """A kept response of about 2 KB (a Response, its conversation and input), as inbound/responses_state keeps."""
    text = "The quick brown fox jumps over the lazy dog. " * 12
    response = {"id": "resp_" + uuid.uuid4().hex, "object": "response", "status": "completed",
                "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
                "usage": {"input_tokens": 20, "output_tokens": 80, "total_tokens": 100}}  # fmt: skip
    conversation = [{"role": "user", "content": text}, {"role": "assistant", "content": text}]
    return json.dumps(
        {"response": response, "conversation": conversation, "inputs": [{"role": "user", "content": text}]}
    ).encode()


# ------------------------------------------------------------------------------------------- prefill


def prefill_sqlite(path: Path, n: int) -> None:
    """`n` kept responses (1% expired) written straight into the store's table, as the store writes them."""
    value = record()
    now = time.time()
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")
        db.execute(
            "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL NOT NULL)"
        )
        batch = 20_000
        for start in range(0, n, batch):
            rows = [
                (
                    PREFIX + "resp_" + uuid.uuid4().hex,
                    value,
                    now - 60 if i % int(1 / EXPIRED_SHARE) == 0 else now + KEPT,
                )
                for i in range(start, min(n, start + batch))
            ]
            db.execute("BEGIN")
            db.executemany("INSERT INTO entries VALUES (?, ?, ?)", rows)
            db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def prefill_redis(url: str, n: int) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    value = record()
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        ttl = 1 if i % int(1 / EXPIRED_SHARE) == 0 else KEPT
        pipe.set(PREFIX + "resp_" + uuid.uuid4().hex, value, ex=ttl)
        if i % 10_000 == 9_999:
            pipe.execute()
    pipe.execute()
    time.sleep(1.1)  # the 1% expire


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------------------------- the store itself


async def _per_request(store: Any, seconds: float) -> dict[str, float]:
    """What one /v1/responses request does to the store (keep one, load one), repeated for `seconds`."""
    value = record()
    keeps, loads = [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or len(keeps) < 50:
        key = PREFIX + "resp_" + uuid.uuid4().hex
        t = time.perf_counter()
        await store.put(key, value, KEPT)
        keeps.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert await store.get(key) == value
        loads.append(time.perf_counter() - t)
        if len(keeps) >= 20_000:
            break
    await store.aclose()
    return {
        "keep_us": statistics.median(keeps) * 1e6,
        "load_us": statistics.median(loads) * 1e6,
        "ops": len(keeps),
    }


def store_child(spec: dict[str, Any]) -> dict[str, float]:
    """In a child process whose path starts with the tree measured: open the store and time it."""
    from reference_gateway.flows.relay_store import open_store

    return asyncio.run(_per_request(open_store(spec["url"]), spec["seconds"]))


def measure_store(url: str, tree: Path, seconds: float) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{Path(__file__).resolve().parent}"}
    spec = json.dumps({"url": url, "seconds": seconds})
    done = subprocess.run([sys.executable, __file__, "--store-child", spec], env=env, capture_output=True,
                          text=True, check=False, timeout=3600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------------------------- through the gateway


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _load(port: int, seconds: float, latency_n: int, pid: int) -> dict[str, float]:
    from bench_peers import Conn, build, throughput

    body = {"model": "anthropic/claude-sonnet-5-5", "input": "hi", "max_output_tokens": 200}
    raw = build("127.0.0.1", port, "/openai/v1/responses", body, {"Authorization": f"Bearer {KEY}"})
    one = Conn("127.0.0.1", port)
    for _ in range(50):
        status, _n = await one.request(raw)
        assert status == 200, status
    samples = []
    for _ in range(latency_n):
        t = time.perf_counter()
        await one.request(raw)
        samples.append(time.perf_counter() - t)
    # throughput over 8 connections and the gateway's own CPU a request (what the machine's other load changes least)
    return {
        "median_ms": statistics.median(samples) * 1000,
        **await throughput("127.0.0.1", port, raw, seconds, pid),
    }


def measure_gateway(
    state: Path, upstream: str, seconds: float, latency_n: int, rounds: int
) -> dict[str, Any]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "reference_gateway", "--profile", "ezat", "--upstream-url", upstream, "--port",
           str(port), "--api-key", KEY, "--upstream-key", KEY, "--state-url", f"sqlite:///{state}",
           "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_port(port, proc)
        runs = [asyncio.run(_load(port, seconds, latency_n, proc.pid)) for _ in range(rounds)]
    finally:
        proc.terminate()
        proc.wait(10)
    return {
        "rps": max(r["rps"] for r in runs),
        "median_ms": min(r["median_ms"] for r in runs),
        "cpu_us_per_request": min(r["cpu_us_per_request"] for r in runs),
        "rounds": runs,
    }


@contextlib.contextmanager
def fake_upstream(tmp: Path) -> Iterator[str]:
    port_file = tmp / "upstream.port"
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent / "bench_peers.py"),
                             "--serve-upstream", str(port_file)], start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text()):
            if time.monotonic() > deadline:
                raise RuntimeError("the fake upstream did not start")
            time.sleep(0.05)
        port = int(port_file.read_text())
        wait_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 100_000, 1_000_000])
    ap.add_argument("--backends", nargs="*", default=["sqlite", "redis"], choices=["sqlite", "redis"])
    ap.add_argument("--seconds", type=float, default=4.0, help="per store size")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose store is measured")
    ap.add_argument(
        "--gateway", action="store_true", help="also /v1/responses through the gateway, empty vs largest"
    )
    ap.add_argument("--gateway-turns", type=int, default=4, help="turns of empty and largest, alternating")
    ap.add_argument("--no-store", action="store_true", help="only the gateway measurement (with --gateway)")
    ap.add_argument("--dir", type=Path, help="where the stores are made (default: a temporary folder)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--store-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.store_child:
        print(json.dumps(store_child(json.loads(args.store_child))))
        return 0
    tmp = args.dir or Path(tempfile.mkdtemp(prefix="gc-state-"))
    tmp.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"tree": str(args.tree), "record_bytes": len(record()), "expired_share": EXPIRED_SHARE,
                               "cores": os.cpu_count(), "store": {}}  # fmt: skip
    for backend in [] if args.no_store else args.backends:
        rows: dict[str, Any] = {}
        with contextlib.ExitStack() as stack:
            redis_url = stack.enter_context(redis_server()) if backend == "redis" else None
            for n in args.sizes:
                started = time.monotonic()
                if backend == "sqlite":
                    path = tmp / f"store-{n}.sqlite3"
                    if not path.exists():
                        prefill_sqlite(path, n)
                    copy = tmp / "measured.sqlite3"  # the store measured changes; the prefilled one is kept
                    for suffix in ("", "-wal", "-shm"):
                        Path(str(copy) + suffix).unlink(missing_ok=True)
                    shutil.copyfile(path, copy)
                    url = f"sqlite:///{copy}"
                else:
                    assert redis_url is not None
                    prefill_redis(redis_url, n)
                    url = redis_url
                filled = time.monotonic() - started
                measured = measure_store(url, args.tree, args.seconds)
                rows[str(n)] = {**measured, "prefill_s": round(filled, 1)}
                print(f"{backend} {n:>9,}: keep {measured['keep_us']:8.0f} µs  load {measured['load_us']:6.0f} µs  "
                      f"({measured['ops']:.0f} requests)", flush=True)  # fmt: skip
        smallest = rows[str(min(args.sizes))]
        for row in rows.values():
            row["keep_ratio"] = round(row["keep_us"] / smallest["keep_us"], 2)
            row["load_ratio"] = round(row["load_us"] / smallest["load_us"], 2)
        results["store"][backend] = rows
    if args.gateway:
        largest = max(args.sizes)
        if not (tmp / f"store-{largest}.sqlite3").exists():
            prefill_sqlite(tmp / f"store-{largest}.sqlite3", largest)
        with fake_upstream(tmp) as upstream:
            measured: dict[str, list[dict[str, Any]]] = {"empty": [], str(largest): []}
            # empty and largest taken in turns, each figure the best of its turns (the machine is shared)
            for turn in range(args.gateway_turns):
                for name, n in (("empty", 0), (str(largest), largest))[:: 1 if turn % 2 == 0 else -1]:
                    state = tmp / f"gateway-{name}.sqlite3"
                    for suffix in ("", "-wal", "-shm"):
                        Path(str(state) + suffix).unlink(missing_ok=True)
                    if n:
                        shutil.copyfile(tmp / f"store-{n}.sqlite3", state)
                    got = measure_gateway(state, upstream, args.seconds, 300, 1)
                    measured[name].append(got)
                    print(f"gateway, store {name}: {got['rps']:.0f} rps, median {got['median_ms']:.2f} ms, "
                          f"{got['cpu_us_per_request']:.0f} µs CPU a request", flush=True)  # fmt: skip
            best = {name: {"rps": max(g["rps"] for g in runs), "median_ms": min(g["median_ms"] for g in runs),
                           "cpu_us_per_request": min(g["cpu_us_per_request"] for g in runs)}
                    for name, runs in measured.items()}  # fmt: skip
            empty, big = best["empty"], best[str(largest)]
            ratio = {"rps": round(big["rps"] / empty["rps"], 3), "median": round(big["median_ms"] / empty["median_ms"], 3),
                     "cpu": round(big["cpu_us_per_request"] / empty["cpu_us_per_request"], 3)}  # fmt: skip
            print(f"gateway, {largest:,} kept / empty: throughput {ratio['rps']:.2f}x, median {ratio['median']:.2f}x, "
                  f"CPU a request {ratio['cpu']:.2f}x", flush=True)  # fmt: skip
            results["gateway"] = {"best": best, "ratio": ratio, "turns": measured}
    print(json.dumps({b: {n: (r["keep_ratio"], r["load_ratio"]) for n, r in rows.items()}
                      for b, rows in results["store"].items()}))  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
