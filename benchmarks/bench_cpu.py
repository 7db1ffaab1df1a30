"""CPU time per request of the reference gateway, in one process: the app driven through httpx's ASGI transport,
the upstream an in-memory mock. It counts the CPU the gateway's code costs (plus a constant share for the
client and the mock), so two trees compare even on a loaded machine, where wall-clock numbers
(`bench_peers.py`) wander with the other processes.

    PYTHONPATH=TREE python3 benchmarks/bench_cpu.py [--requests 2000] [--streams 200] [--rounds 5]

Prints, per kind, the best and the median of `--rounds` rounds in µs of CPU per request (the best is the
least disturbed by other processes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

import httpx

# The same fake Anthropic answer the peer benchmark serves (run from benchmarks/, so it is importable).
from fake_upstream import MESSAGE

from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import EZAT
from reference_gateway.upstream.client import UpstreamSettings

KEY = "sk-bench"
MODEL = "anthropic/claude-sonnet-5-5"


def _sse(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()


def _stream(events: int) -> bytes:
    start = {
        "type": "message_start",
        "message": {"id": "msg_b", "usage": {"input_tokens": 20, "output_tokens": 1}},
    }
    out = [
        _sse(start),
        _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    out += [
        _sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "word "}})
        for _ in range(events)
    ]
    out += [
        _sse({"type": "content_block_stop", "index": 0}),
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": events},
            }
        ),
        _sse({"type": "message_stop"}),
    ]
    return b"".join(out)


STREAM = _stream(100)


def _upstream(request: httpx.Request) -> httpx.Response:
    if b'"stream":true' in request.content:
        return httpx.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})
    return httpx.Response(200, content=MESSAGE, headers={"content-type": "application/json"})


async def _start(app: Any) -> tuple[asyncio.Future[None], asyncio.Queue[dict[str, Any]]]:
    """Run the app's lifespan up to its startup; the queue then takes the shutdown message."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    started = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        started.set()

    task = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, inbox.get, send)
    )
    await started.wait()
    return task, inbox


async def _run(requests: int, streams: int, rounds: int) -> dict[str, list[float]]:
    settings = GatewaySettings(
        profile=EZAT,
        catalog=load_catalog(),
        upstream=UpstreamSettings("http://upstream.invalid", "sk-up"),
        keys=KeyRing.of([KEY]),
    )
    app = create_app(settings, Hooks(upstream_transport=httpx.MockTransport(_upstream), clock=lambda: 1.0))
    lifespan, inbox = await _start(app)
    headers = {"authorization": f"Bearer {KEY}"}
    plain = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    streamed = {**plain, "stream": True}
    results: dict[str, list[float]] = {"non-streaming": [], "stream of 100 events": []}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as client:
        for _ in range(rounds):
            for kind, body, n in (
                ("non-streaming", plain, requests),
                ("stream of 100 events", streamed, streams),
            ):
                started = time.process_time()
                for _ in range(n):
                    response = await client.post("/openai/v1/chat/completions", json=body, headers=headers)
                    assert response.status_code == 200, response.text
                results[kind].append((time.process_time() - started) / n * 1e6)
    await inbox.put({"type": "lifespan.shutdown"})
    await lifespan
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = asyncio.run(_run(args.requests, args.streams, args.rounds))
    for kind, values in results.items():
        print(f"{kind}: best {min(values):.0f} µs CPU/request, median {statistics.median(values):.0f}")


if __name__ == "__main__":
    main()
