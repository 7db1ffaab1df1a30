"""Added latency and throughput of the reference gateway versus calling a fake Anthropic upstream directly.

    python benchmarks/bench_gateway.py [--requests 300] [--concurrency 16] [--json out.json]

The fake upstream and the gateway each run in their own process (uvicorn on 127.0.0.1, free ports); the client
is this process. Every number is reported beside its direct-call baseline and as a ratio, from one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
# Run as a script from anywhere: its own folder first, for the peer benchmark's answer (the same workload).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_upstream import MESSAGE, TEXT  # noqa: E402

KEY = "sk-bench"


def _events() -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_b",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-5-5",
                "stop_reason": None,
                "usage": {"input_tokens": 20, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": TEXT[i : i + 16]}}
        for i in range(0, len(TEXT), 16)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 80}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


STREAM = _events()


async def upstream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The fake Anthropic Messages API: a fixed answer, as JSON or as an SSE stream."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            done = "lifespan.startup.complete" if message["type"] == "lifespan.startup" else None
            await send({"type": done or "lifespan.shutdown.complete"})
            if done is None:
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    stream = b'"stream":true' in body
    kind = b"text/event-stream" if stream else b"application/json"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    await send({"type": "http.response.body", "body": STREAM if stream else MESSAGE})


def _serve_upstream() -> None:
    import uvicorn

    sock = socket.socket(
        socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )  # so asyncio sets TCP_NODELAY
    sock.bind(("127.0.0.1", 0))
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(upstream_app, log_level="warning", access_log=False)).run(sockets=[sock])


def _start(cmd: list[str]) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert proc.stdout is not None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        if match:
            return proc, match.group(0)
    proc.kill()
    raise RuntimeError(f"{cmd} did not start")


Call = Callable[[httpx.AsyncClient], Awaitable[None]]


def _direct(url: str, stream: bool) -> Call:
    body = {"model": "claude-sonnet-5-5", "max_tokens": 256, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        body["stream"] = True

    async def call(client: httpx.AsyncClient) -> None:
        async with client.stream("POST", f"{url}/v1/messages", json=body, headers={"x-api-key": "k"}) as r:
            async for _ in r.aiter_bytes():
                pass
            assert r.status_code == 200

    return call


def _gateway(url: str, stream: bool) -> Call:
    body: dict[str, Any] = {
        "model": "anthropic/claude-sonnet-5-5",
        "messages": [{"role": "user", "content": "hi"}],
    }
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}

    async def call(client: httpx.AsyncClient) -> None:
        headers = {"authorization": f"Bearer {KEY}", "x-ezat-cache": "off"}
        async with client.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers) as r:
            async for _ in r.aiter_bytes():
                pass
            assert r.status_code == 200

    return call


def _client(concurrency: int = 1) -> httpx.AsyncClient:
    # The same client for both paths; TCP_NODELAY so that Nagle/delayed-ACK stalls do not swamp the numbers.
    transport = httpx.AsyncHTTPTransport(
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    )
    return httpx.AsyncClient(timeout=30, transport=transport)


async def _latency(call: Call, n: int) -> list[float]:
    async with _client() as client:
        for _ in range(10):
            await call(client)  # warm-up: connections, imports, JIT-free but cache-warm
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            await call(client)
            samples.append((time.perf_counter() - start) * 1000)
        return samples


async def _throughput(call: Call, n: int, concurrency: int) -> float:
    async with _client(concurrency) as client:
        await asyncio.gather(*(call(client) for _ in range(concurrency)))
        queue = iter(range(n))

        async def worker() -> None:
            for _ in queue:
                await call(client)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - start)


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _run(upstream: str, gateway: str, n: int, concurrency: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for stream in (False, True):
        mode = "stream" if stream else "create"
        direct = await _latency(_direct(upstream, stream), n)
        via = await _latency(_gateway(gateway, stream), n)
        direct_rps = await _throughput(_direct(upstream, stream), n, concurrency)
        via_rps = await _throughput(_gateway(gateway, stream), n, concurrency)
        results[mode] = {
            "latency_ms": {
                "direct_p50": statistics.median(direct),
                "gateway_p50": statistics.median(via),
                "added_p50": statistics.median(via) - statistics.median(direct),
                "direct_p95": _p(direct, 0.95),
                "gateway_p95": _p(via, 0.95),
                "ratio_p50": statistics.median(via) / statistics.median(direct),
            },
            "throughput_rps": {
                "direct": direct_rps,
                "gateway": via_rps,
                "ratio": via_rps / direct_rps,
            },
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_upstream:
        _serve_upstream()
        return 0
    upstream_proc, upstream = _start([sys.executable, __file__, "--serve-upstream"])
    gateway_proc, gateway = _start(
        [
            sys.executable, "-m", "reference_gateway", "--profile", "ezat", "--upstream-url", upstream,
            "--upstream-key", "sk-ant-bench", "--api-key", KEY, "--port", "0", "--log-level", "warning",
        ]
    )  # fmt: skip
    try:
        results = asyncio.run(_run(upstream, gateway, args.requests, args.concurrency))
    finally:
        for proc in (gateway_proc, upstream_proc):
            proc.terminate()
            proc.wait(10)
    print(
        f"reference gateway vs direct fake upstream ({args.requests} requests, concurrency {args.concurrency})"
    )
    print(
        f"{'mode':8} {'p50 direct':>11} {'p50 gateway':>12} {'added':>8} {'ratio':>6} {'rps direct':>11} {'rps gateway':>12} {'ratio':>6}"
    )
    for mode, r in results.items():
        lat, thr = r["latency_ms"], r["throughput_rps"]
        print(
            f"{mode:8} {lat['direct_p50']:>9.2f}ms {lat['gateway_p50']:>10.2f}ms {lat['added_p50']:>6.2f}ms"
            f" {lat['ratio_p50']:>6.2f} {thr['direct']:>11.0f} {thr['gateway']:>12.0f} {thr['ratio']:>6.2f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
