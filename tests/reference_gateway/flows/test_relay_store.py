"""Profile `relay`, state: the storage interface on both backends (SQLite file, a real `redis-server`), an
idempotent answer replayed after a gateway restart and across two gateway processes, and 20 concurrent requests
with one Idempotency-Key making exactly one upstream call."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.flows.relay_store import Idempotency, RedisStore, SQLiteStore, StateStore, StoredAnswer
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import RELAY
from reference_gateway.upstream.client import UpstreamSettings
from tests.reference_gateway.conftest import CLIENT_KEY, FakeFamilies, ServerThread

ROOT = Path(__file__).resolve().parents[3]
BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A real redis-server on a free loopback port, no persistence; stopped by its pid."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (Debian: apt-get install redis-server); .ci/run installs it"
        )
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=0.5) as s,
            ):
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    break
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------------------------- the interface


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def opened(
    kind: str, tmp_path: Path, redis: str | None
) -> AsyncIterator[tuple[StateStore, Clock | None]]:
    if kind == "sqlite":
        clock = Clock()
        yield SQLiteStore(tmp_path / "s.sqlite3", clock), clock
        return
    assert redis is not None
    store = RedisStore(redis)
    try:
        yield store, None
    finally:
        await store.aclose()


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest) -> tuple[str, str | None]:
    if request.param == "redis":
        return "redis", request.getfixturevalue("redis_url")
    return "sqlite", None


def test_store_get_put_claim_release(backend: tuple[str, str | None], tmp_path: Path) -> None:
    kind, redis = backend
    key = f"t:{os.getpid()}:{time.monotonic_ns()}"

    async def scenario() -> None:
        async with opened(kind, tmp_path, redis) as (store, clock):
            assert await store.get(key) is None
            await store.put(key, b"value", 60)
            assert await store.get(key) == b"value"
            first = await store.claim(key + ":c", 60)
            assert first is not None
            assert await store.claim(key + ":c", 60) is None  # held
            await store.release(key + ":c", "not-the-token")
            assert await store.claim(key + ":c", 60) is None  # still held: only the holder releases
            await store.release(key + ":c", first)
            assert await store.claim(key + ":c", 60) is not None
            if clock is not None:  # expiry, on the SQLite clock
                clock.now += 61
                assert await store.get(key) is None
                assert await store.claim(key + ":c", 60) is not None  # an expired claim can be taken

    asyncio.run(scenario())


def test_concurrent_claims_one_winner(backend: tuple[str, str | None], tmp_path: Path) -> None:
    kind, redis = backend
    key = f"race:{time.monotonic_ns()}"

    async def scenario() -> list[str | None]:
        async with opened(kind, tmp_path, redis) as (store, _):
            return list(await asyncio.gather(*(store.claim(key, 60) for _ in range(20))))

    tokens = asyncio.run(scenario())
    assert sum(t is not None for t in tokens) == 1


def test_idempotency_runs_the_call_once_for_concurrent_duplicates(tmp_path: Path) -> None:
    calls = 0

    async def call() -> StoredAnswer:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.2)
        return StoredAnswer(200, b'{"ok":true}', "application/json")

    async def scenario() -> list[tuple[StoredAnswer, bool]]:
        idem = Idempotency(SQLiteStore(tmp_path / "i.sqlite3"), 3600, wait=10, poll=0.01)
        return list(await asyncio.gather(*(idem.run("scope", "k", "fp", call) for _ in range(10))))

    results = asyncio.run(scenario())
    assert calls == 1
    assert sum(not replayed for _, replayed in results) == 1
    assert {a.body for a, _ in results} == {b'{"ok":true}'}


# ------------------------------------------------------------------------------------------- gateway processes


@contextlib.contextmanager
def gateway_process(upstream: str, state_url: str, log: Path) -> Iterator[str]:
    """`python -m reference_gateway --profile relay` as its own process on a free port; stopped by its pid."""
    cmd = [
        sys.executable,
        "-m",
        "reference_gateway",
        "--profile",
        "relay",
        "--upstream-url",
        upstream,
        "--state-url",
        state_url,
        "--api-key",
        CLIENT_KEY,
        "--port",
        "0",
        "--log-level",
        "warning",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=out, env=env, cwd=ROOT)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode()
            match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            if match is None:
                pytest.fail(f"the gateway did not start: {line!r} {log.read_text()[-2000:]}")
            url = f"http://127.0.0.1:{match.group(1)}"
            deadline = time.monotonic() + 20
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    pytest.fail("the gateway is not healthy")
                time.sleep(0.05)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def post(url: str, key: str, body: dict[str, Any] = BODY) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {CLIENT_KEY}", "idempotency-key": key},
        timeout=30,
    )


@pytest.mark.e2e
def test_sqlite_replay_after_a_gateway_restart(
    families_server: tuple[FakeFamilies, ServerThread], families: FakeFamilies, tmp_path: Path
) -> None:
    state = f"sqlite:///{tmp_path / 'relay.sqlite3'}"
    with gateway_process(families_server[1].url, state, tmp_path / "a.log") as url:
        first = post(url, "restart-1")
    assert first.status_code == 200 and "idempotency-replayed" not in first.headers
    with gateway_process(families_server[1].url, state, tmp_path / "b.log") as url:
        again = post(url, "restart-1")
    assert again.status_code == 200
    assert again.headers["idempotency-replayed"] == "true" and again.headers["x-relay-cost-usd"] == "0"
    assert again.content == first.content
    assert len(families.calls) == 1


def test_redis_shared_by_two_gateway_processes(
    families_server: tuple[FakeFamilies, ServerThread], families: FakeFamilies, redis_url: str, tmp_path: Path
) -> None:
    upstream = families_server[1].url
    key = f"replicas-{time.monotonic_ns()}"
    with (
        gateway_process(upstream, redis_url, tmp_path / "a.log") as a,
        gateway_process(upstream, redis_url, tmp_path / "b.log") as b,
    ):
        first = post(a, key)
        second = post(b, key)
        assert first.status_code == second.status_code == 200
        assert second.headers["idempotency-replayed"] == "true" and second.content == first.content
        assert len(families.calls) == 1
        # Concurrent duplicates spread over both replicas: one upstream call between them.
        families.reset()
        families.delay = 0.5
        burst = f"burst-{time.monotonic_ns()}"
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(lambda i: post((a, b)[i % 2], burst), range(20)))
    assert [r.status_code for r in answers] == [200] * 20
    assert len(families.calls) == 1
    assert sum(r.headers.get("idempotency-replayed") == "true" for r in answers) == 19
    assert len({r.content for r in answers}) == 1


@pytest.mark.e2e
def test_twenty_concurrent_requests_one_key_one_upstream_call(
    families_server: tuple[FakeFamilies, ServerThread], families: FakeFamilies, tmp_path: Path
) -> None:
    settings = GatewaySettings(
        profile=RELAY,
        catalog=load_catalog(shipped=RELAY.catalog),
        upstream=UpstreamSettings(base_url=families_server[1].url, api_key="sk-upstream", request_timeout=10),
        keys=KeyRing.of([CLIENT_KEY]),
        state_url=f"sqlite:///{tmp_path / 'burst.sqlite3'}",
    )
    families.delay = 0.5

    async def burst(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=40)) as http:
            headers = {"authorization": f"Bearer {CLIENT_KEY}", "idempotency-key": "burst-sqlite"}
            return list(
                await asyncio.gather(
                    *(http.post(f"{url}/v1/chat/completions", json=BODY, headers=headers) for _ in range(20))
                )
            )

    with ServerThread(create_app(settings, Hooks())) as server:
        answers = asyncio.run(burst(server.url))
    assert [r.status_code for r in answers] == [200] * 20
    assert len(families.calls) == 1
    assert sum(r.headers.get("idempotency-replayed") == "true" for r in answers) == 19
    assert sum(r.headers["x-relay-cost-usd"] != "0" for r in answers) == 1


def test_sqlite_purges_expired_rows_in_bounded_batches_through_the_index(tmp_path: Path) -> None:
    """Issue 47: a write no longer scans the table for expired rows; a purge, off the request path, deletes at
    most `purge_batch` of them, found through the index on `expires`."""
    now = [1000.0]
    store = SQLiteStore(tmp_path / "p.sqlite3", lambda: now[0], purge_every=3600, purge_batch=10)

    async def go() -> None:
        for i in range(25):
            await store.put(f"old{i}", b"x", 5)
        await store.put("kept", b"y", 100)
        now[0] += 10  # the 25 are expired, "kept" is not
        assert await store.get("old0") is None  # expired reads as gone, purged or not
        assert [store.purge(), store.purge(), store.purge(), store.purge()] == [10, 10, 5, 0]
        assert await store.get("kept") == b"y"
        await store.aclose()

    asyncio.run(go())
    with contextlib.closing(sqlite3.connect(tmp_path / "p.sqlite3")) as db:
        plan = " ".join(
            str(row[-1])
            for row in db.execute(
                "EXPLAIN QUERY PLAN SELECT rowid FROM entries WHERE expires <= ? ORDER BY expires LIMIT ?",
                (0, 1),
            )
        )
        assert "USING COVERING INDEX entries_expires" in plan or "USING INDEX entries_expires" in plan, plan
        assert db.execute("SELECT count(*) FROM entries").fetchone() == (1,)
