"""The reference gateway in front of a provider that closes every connection a moment after its answer (issue 47).

    python3 benchmarks/bench_closing_upstream.py [--requests 3000] [--concurrency 8] [--profile ezat]
        [--json benchmarks/results/closing-upstream.json]

The provider (a raw asyncio server in its own process, Anthropic's Messages answers of benchmarks/fake_upstream.py)
answers each request and closes the connection 0-3 ms later, at random, without `Connection: close` (legal
HTTP/1.1; what servers and load balancers do at their idle timeouts): the gateway's pool may hand that connection
to its next request before it has seen the close. The gateway runs as users run it (`python -m reference_gateway`,
uvloop); half the requests stream. Printed: the failures (any answer but a 200 with the whole body, or a stream
without its final chunk and `[DONE]`), and the gateway's log lines that name a resend. 0 failures is the goal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_upstream import DELTA, END, MESSAGE, START

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-bench"


async def _provider(port_file: str, low_ms: float, high_ms: float) -> None:
    stream_body = START + DELTA * 5 + END

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(x.split(b":")[1])
                    for x in head.split(b"\r\n")
                    if x.lower().startswith(b"content-length:")
                ),
                0,
            )
            body = await reader.readexactly(length)
            if b'"stream":true' in body.replace(b" ", b""):
                answer = (
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
                    % (
                        len(stream_body),
                        stream_body,
                    )
                )
            else:
                answer = (
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                    % (
                        len(MESSAGE),
                        MESSAGE,
                    )
                )
            writer.write(answer)
            await writer.drain()
            await asyncio.sleep(random.uniform(low_ms, high_ms) / 1000)  # then close, saying nothing
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(port: int, proc: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the gateway did not start")


async def _load(base: str, total: int, concurrency: int, model: str) -> dict[str, Any]:
    failures: list[str] = []
    done = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        headers = {"authorization": f"Bearer {KEY}"}

        async def one(i: int) -> None:
            nonlocal done
            stream = i % 2 == 1
            body = {
                "model": model,
                "max_tokens": 50,
                "stream": stream,
                "messages": [{"role": "user", "content": "hi"}],
            }
            try:
                if stream:
                    async with client.stream(
                        "POST", "/chat/completions", json=body, headers=headers
                    ) as answer:
                        text = (await answer.aread()).decode()
                    ok = (
                        answer.status_code == 200
                        and text.rstrip().endswith("data: [DONE]")
                        and "word" in text
                    )
                else:
                    answer = await client.post("/chat/completions", json=body, headers=headers)
                    ok = answer.status_code == 200 and "quick brown fox" in answer.text
                if not ok:
                    failures.append(
                        f"{'stream' if stream else 'json'} {answer.status_code}: {answer.text[:120]}"
                    )
            except httpx.HTTPError as exc:
                failures.append(f"{'stream' if stream else 'json'} {exc!r}")
            done += 1

        queue = iter(range(total))

        async def worker() -> None:
            for i in queue:
                await one(i)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
    return {
        "requests": done,
        "failures": len(failures),
        "examples": failures[:5],
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--profile", default="ezat")
    ap.add_argument("--close-after-ms", nargs=2, type=float, default=[0.0, 3.0], metavar=("LOW", "HIGH"))
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--serve-provider", metavar="PORT_FILE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve_provider:
        try:
            import uvloop

            uvloop.install()
        except ImportError:
            pass
        asyncio.run(_provider(args.serve_provider, *args.close_after_ms))
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="gc-closing-"))
    port_file = tmp / "provider.port"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    low, high = args.close_after_ms
    provider = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve-provider",
            str(port_file),
            "--close-after-ms",
            str(low),
            str(high),
        ],
        env=env,
        start_new_session=True,
    )
    gateway: subprocess.Popen[Any] | None = None
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text()):
            if time.monotonic() > deadline:
                raise RuntimeError("the provider did not start")
            time.sleep(0.05)
        upstream = f"http://127.0.0.1:{port_file.read_text()}"
        port = _free_port()
        log = tmp / "gateway.log"
        gateway = subprocess.Popen(
            [sys.executable, "-m", "reference_gateway", "--profile", args.profile, "--upstream-url", upstream,
             "--port", str(port), "--api-key", KEY, "--upstream-key", KEY, "--state-url", f"sqlite:///{tmp}/s.db",
             "--log-level", "warning"],
            env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        _wait(port, gateway)
        base = {"ezat": "/openai/v1", "lyrouter": "/v1", "relay": "/v1"}.get(args.profile, "/v1")
        model = {"ezat": "anthropic/claude-sonnet-5-5"}.get(args.profile, "claude-sonnet-5-5")
        result = asyncio.run(_load(f"http://127.0.0.1:{port}{base}", args.requests, args.concurrency, model))
    finally:
        for proc in (gateway, provider):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)
    result.update(profile=args.profile, close_after_ms=[low, high], concurrency=args.concurrency)
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["failures"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
