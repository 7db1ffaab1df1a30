"""Relay's state: the idempotency store and the response cache, behind one small storage interface with two
backends — SQLite (a file: a restarted gateway still replays what it stored) and Redis (several gateway replicas
behind a load balancer share it).

A claim is the lock that makes concurrent duplicates with one `Idempotency-Key` call the provider once: it lives
in the store (SQLite: a row inserted in a transaction; Redis: SET NX with an expiry), not in the process, so it
holds across replicas. Whoever holds the claim calls the provider and stores the answer; the others poll for it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from reference_gateway.errors import GatewayError


class StateStore(Protocol):
    """Bytes under string keys, each with an expiry; `claim` creates a key only if it does not exist."""

    async def get(self, key: str) -> bytes | None: ...

    async def put(self, key: str, value: bytes, ttl: float) -> None: ...

    async def claim(self, key: str, ttl: float) -> str | None:
        """A token when this caller now holds `key` (it did not exist or had expired), else None."""
        ...

    async def release(self, key: str, token: str) -> None:
        """Remove the claim if `token` still holds it."""
        ...

    async def aclose(self) -> None: ...


class SQLiteStore:
    """One table in a file; every operation is its own short transaction (in a worker thread), so several
    processes may share the file. Each worker thread keeps its connection: opening one per operation was most
    of a cached answer's cost. WAL with synchronous=NORMAL: a commit survives the gateway process ending (what a
    restarted gateway replays), only a power cut may lose the last ones.

    A request costs the same with a million kept entries as with ten (issue 47; benchmarks/bench_state.py): every
    operation finds its row by the primary key, and expired rows are purged off the request path — at most every
    `purge_every` seconds, `purge_batch` rows at a time through an index on `expires`, in a worker thread no
    request waits for (a read never returns an expired row, purged or not). Before, every write first deleted
    the expired rows with a scan of the whole table (no index: 24 MB read per write after an hour of tests)."""

    def __init__(
        self,
        path: str | Path,
        clock: Callable[[], float] = time.time,
        *,
        purge_every: float = 60.0,
        purge_batch: int = 1000,
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self._purge_every = purge_every
        self._purge_batch = purge_batch
        self._next_purge = 0.0
        self._purging: asyncio.Future[int] | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(self._open()) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL NOT NULL)"
            )
            # A file written before the index existed gets it here, once (a scan at start, not per request).
            db.execute("CREATE INDEX IF NOT EXISTS entries_expires ON entries (expires)")

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA busy_timeout=30000")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _connect(self) -> sqlite3.Connection:
        """This thread's connection (used by this thread only; closed by aclose)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._open()
            with self._opened_lock:
                self._opened.append(db)
        return db

    def _get(self, key: str) -> bytes | None:
        db = self._connect()
        row = db.execute("SELECT value, expires FROM entries WHERE key = ?", (key,)).fetchone()
        if row is None or row[1] <= self._clock():
            return None
        return bytes(row[0])

    def _put(self, key: str, value: bytes, ttl: float) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO entries VALUES (?, ?, ?)", (key, value, self._clock() + ttl)
        )

    def purge(self) -> int:
        """Delete up to `purge_batch` expired rows, oldest first, through the index; how many were deleted."""
        cursor = self._connect().execute(
            "DELETE FROM entries WHERE rowid IN "
            "(SELECT rowid FROM entries WHERE expires <= ? ORDER BY expires LIMIT ?)",
            (self._clock(), self._purge_batch),
        )
        return int(cursor.rowcount)

    def _maybe_purge(self) -> None:
        """Start a bounded purge in a worker thread when one is due and none is running; nobody awaits it."""
        now = time.monotonic()
        if now < self._next_purge or (self._purging is not None and not self._purging.done()):
            return
        self._next_purge = now + self._purge_every
        self._purging = asyncio.get_running_loop().run_in_executor(None, self.purge)
        self._purging.add_done_callback(_quiet)

    def _claim(self, key: str, ttl: float) -> str | None:
        token = secrets.token_hex(16)
        now = self._clock()
        db = self._connect()
        db.execute("BEGIN IMMEDIATE")  # the write lock: one claimer at a time, across processes
        try:
            db.execute("DELETE FROM entries WHERE key = ? AND expires <= ?", (key, now))
            cursor = db.execute(
                "INSERT OR IGNORE INTO entries VALUES (?, ?, ?)", (key, token.encode(), now + ttl)
            )
            claimed = cursor.rowcount == 1
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return token if claimed else None

    def _release(self, key: str, token: str) -> None:
        self._connect().execute("DELETE FROM entries WHERE key = ? AND value = ?", (key, token.encode()))

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, key)

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        await asyncio.to_thread(self._put, key, value, ttl)
        self._maybe_purge()

    async def claim(self, key: str, ttl: float) -> str | None:
        return await asyncio.to_thread(self._claim, key, ttl)

    async def release(self, key: str, token: str) -> None:
        await asyncio.to_thread(self._release, key, token)

    async def aclose(self) -> None:
        if self._purging is not None:
            with contextlib.suppress(Exception):
                await self._purging
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for db in opened:
            db.close()


def _quiet(done: asyncio.Future[int]) -> None:
    """A background purge's outcome is nobody's: a failure (the file busy past its timeout) waits for the next."""
    if not done.cancelled():
        done.exception()


# Delete the claim only while it is still ours (it may have expired and been taken by someone else).
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


class RedisStore:
    """The same interface on Redis (`redis://host:port/db`): values with PX expiries, claims with SET NX PX. Redis
    expires keys itself (on access and by sampling), so no purge is needed and a request costs the same at any
    size (benchmarks/bench_state.py)."""

    def __init__(self, url: str) -> None:
        import redis.asyncio  # only a Redis-backed gateway needs the client

        self._redis: Any = redis.asyncio.Redis.from_url(url)

    async def get(self, key: str) -> bytes | None:
        value = await self._redis.get(key)
        return bytes(value) if value is not None else None

    async def put(self, key: str, value: bytes, ttl: float) -> None:
        await self._redis.set(key, value, px=max(1, int(ttl * 1000)))

    async def claim(self, key: str, ttl: float) -> str | None:
        token = secrets.token_hex(16)
        claimed = await self._redis.set(key, token, nx=True, px=max(1, int(ttl * 1000)))
        return token if claimed else None

    async def release(self, key: str, token: str) -> None:
        await self._redis.eval(_RELEASE, 1, key, token)

    async def aclose(self) -> None:
        await self._redis.aclose()


def open_store(url: str, clock: Callable[[], float] = time.time) -> StateStore:
    """`sqlite:///relative/path`, `sqlite:////absolute/path` or `redis://…` (`rediss://` for TLS)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme == "sqlite":
        path = url.split("://", 1)[1]
        path = path[1:] if path.startswith("/") else path
        if not path:
            raise ValueError("a sqlite state URL needs a file path: sqlite:///path/to/state.sqlite3")
        return SQLiteStore(path, clock)
    if scheme in ("redis", "rediss", "unix"):
        return RedisStore(url)
    raise ValueError(f"unsupported state URL scheme {scheme!r}; use sqlite:///FILE or redis://HOST:PORT")


# ------------------------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class StoredAnswer:
    """A non-streaming answer as it is stored and replayed."""

    status: int
    body: bytes
    media_type: str
    headers: Mapping[str, str] = field(default_factory=dict)
    fingerprint: str = ""

    def dumps(self) -> bytes:
        return json.dumps(
            {
                "status": self.status,
                "body": base64.b64encode(self.body).decode("ascii"),
                "media_type": self.media_type,
                "headers": dict(self.headers),
                "fingerprint": self.fingerprint,
            }
        ).encode()

    @classmethod
    def loads(cls, raw: bytes) -> StoredAnswer:
        data = json.loads(raw)
        return cls(
            int(data["status"]),
            base64.b64decode(data["body"]),
            str(data["media_type"]),
            dict(data.get("headers") or {}),
            str(data.get("fingerprint", "")),
        )


def digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def body_fingerprint(body: Mapping[str, Any]) -> str:
    return digest(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


class Idempotency:
    """Relay: "Provide an Idempotency-Key header to make a retried call safe: a repeat within 24 hours returns the
    stored response"."""

    def __init__(
        self,
        store: StateStore,
        ttl: float,
        *,
        wait: float,
        poll: float = 0.05,
        claim_ttl: float | None = None,
    ) -> None:
        self._store = store
        self._ttl = ttl
        self._wait = wait  # how long a duplicate waits for the first call's answer
        self._poll = poll
        self._claim_ttl = claim_ttl if claim_ttl is not None else wait + 30

    async def run(
        self, scope: str, key: str, fingerprint: str, call: Callable[[], Awaitable[StoredAnswer]]
    ) -> tuple[StoredAnswer, bool]:
        """(answer, replayed). Exactly one of concurrent duplicates runs `call`; a 200 answer is stored."""
        name = "relay:idem:" + digest(scope, key)
        lock = name + ":claim"
        deadline = time.monotonic() + self._wait
        while True:
            stored = await self._store.get(name)
            if stored is not None:
                return self._replay(StoredAnswer.loads(stored), fingerprint), True
            token = await self._store.claim(lock, self._claim_ttl)
            if token is not None:
                try:
                    stored = await self._store.get(name)  # stored between our look and our claim
                    if stored is not None:
                        return self._replay(StoredAnswer.loads(stored), fingerprint), True
                    answer = await call()
                    if answer.status == 200:
                        await self._store.put(name, answer.dumps(), self._ttl)
                    return answer, False
                finally:
                    await self._store.release(lock, token)
            if time.monotonic() > deadline:
                raise GatewayError(
                    409,
                    "A request with this Idempotency-Key is still in progress; retry later.",
                    type="invalid_request_error",
                    code="idempotency_key_in_use",
                )
            await asyncio.sleep(self._poll)

    @staticmethod
    def _replay(answer: StoredAnswer, fingerprint: str) -> StoredAnswer:
        if answer.fingerprint and answer.fingerprint != fingerprint:
            raise GatewayError(
                422,
                "This Idempotency-Key was used with a different request body.",
                type="invalid_request_error",
                code="idempotency_key_reused",
                param="Idempotency-Key",
            )
        return answer


class ResponseCache:
    """Relay: "Enable the response cache with Gateway:Cache:TtlSeconds"; a 200 answer is stored for `ttl`."""

    def __init__(self, store: StateStore, ttl: float) -> None:
        self._store = store
        self._ttl = ttl

    @staticmethod
    def key(scope: str, fingerprint: str) -> str:
        return "relay:cache:" + digest(scope, fingerprint)

    async def get(self, key: str) -> StoredAnswer | None:
        raw = await self._store.get(key)
        return StoredAnswer.loads(raw) if raw is not None else None

    async def put(self, key: str, answer: StoredAnswer) -> None:
        if answer.status == 200:
            await self._store.put(key, answer.dumps(), self._ttl)
