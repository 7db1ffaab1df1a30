"""The replay upstream: a loopback ASGI app that answers a gateway's upstream calls from cassettes.

It routes each call by the case marker found in the request body, records every call per marker,
injects faults (status errors, mid-stream errors, drops, delays, re-chunking) and serves image fixtures.

Control API (JSON): `POST /__gc/cases` {marker, rule, upstream} → 201; `GET /__gc/calls?marker=M`;
`DELETE /__gc/cases?marker=M` (no marker: every case); `GET|DELETE /__gc/diagnostics`;
`GET /__gc/fetches` (file-server requests); `GET /__gc/health`.

Loopback file server under `/__gc/files/` (the harness's `${images_url}`), built in code, no files:
  tiny.png, tiny.jpg, tiny.gif, tiny.webp   valid 1x1 images with their real content-type
  png-as-text.txt                           PNG bytes served as text/plain
  not-an-image.png                          text bytes served as image/png
  missing.png                               404
  redirect/<n>/<name>                       n chained 302 redirects, then <name>
  redirect-to?url=<url>                     one 302 to any URL (redirect-to-private-address rules)
  big.png                                   a valid PNG header padded to 10 MiB + 1 byte
  slow.png?delay=S                          tiny.png, first byte after S seconds (default 20)
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import base64
import contextlib
import ipaddress
import json
import logging
import re
import socket
import struct
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from harness import paths
from harness.cassette import Cassette, CassetteError, endpoint_kind, load_named, match, redact_text

MARKER_RE = re.compile(r"\[gc:[A-Za-z0-9/._-]+#[0-9a-f]{6,32}\]")
HOP_BY_HOP = frozenset({"transfer-encoding", "connection", "keep-alive", "content-length", "date", "server"})
UPSTREAM_KEYS = frozenset({"cassette", "fault", "pacing", "rechunk"})
FAULT_KEYS = frozenset(
    {
        "status",
        "body",
        "headers",
        "error_after_events",
        "error",
        "drop_after_bytes",
        "first_byte_delay",
        "pause_after_events",
    }
)
DEFAULT_STREAM_ERROR: Mapping[str, Any] = {"type": "overloaded_error", "message": "Overloaded"}
BIG_FILE_BYTES = 10 * 1024 * 1024 + 1  # over "10 MB" whichever way a doc counts it
_MAX_DIAGNOSTICS = 10000  # bounded memory for a long-running serve-upstream; entries carry `seq`

# Anthropic's error type for a status (wire-reference §1.8), used for fault bodies given without one.
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

log = logging.getLogger(__name__)


class ReplayConfigError(Exception):
    """A case registration the replay upstream cannot honour (bad upstream block, unusable cassette)."""


class _DeliberateDrop(Exception):
    """Raised to make uvicorn close the connection mid-body (drop_after_bytes): no chunked terminator."""


class _DropFilter(logging.Filter):
    # uvicorn logs every exception escaping the app; a deliberate drop is not an error.
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, _DeliberateDrop)


_DROP_FILTER = _DropFilter()


class _HungUpFilter(logging.Filter):
    # asyncio warns when a transport keeps writing after its peer left. For a fake upstream that is the
    # normal end of a gateway hanging up on a stream (client disconnects, size limits), not a problem.
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "socket.send() raised exception."


_HUNG_UP_FILTER = _HungUpFilter()


# ---------------------------------------------------------------------------------------------
# Image fixtures (pure, built once)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_IHDR_1X1 = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))  # 1x1 RGBA


@cache
def tiny_png() -> bytes:
    pixel = b"\x00" + b"\xd9\x77\x57\xff"  # filter byte + one RGBA pixel
    return (
        _PNG_SIGNATURE + _PNG_IHDR_1X1 + _png_chunk(b"IDAT", zlib.compress(pixel)) + _png_chunk(b"IEND", b"")
    )


def _jpeg_segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload


@cache
def tiny_jpeg() -> bytes:
    """A baseline 1x1 grey JPEG: one 8x8 block whose DCT is all zero (DC diff 0, then EOB)."""
    one_code = bytes([1] + [0] * 15)  # one Huffman code, of length 1, for symbol 0x00
    return b"".join(
        [
            b"\xff\xd8",
            _jpeg_segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"),
            _jpeg_segment(0xDB, b"\x00" + b"\x01" * 64),
            _jpeg_segment(0xC0, struct.pack(">BHHB", 8, 1, 1, 1) + b"\x01\x11\x00"),
            _jpeg_segment(0xC4, b"\x00" + one_code + b"\x00"),  # DC table 0: category 0
            _jpeg_segment(0xC4, b"\x10" + one_code + b"\x00"),  # AC table 0: EOB
            _jpeg_segment(0xDA, b"\x01\x01\x00\x00\x3f\x00"),
            b"\x3f",  # bits 0 (DC) 0 (EOB), padded with ones
            b"\xff\xd9",
        ]
    )


@cache
def tiny_gif() -> bytes:
    header = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return header + image + b"\x3b"


@cache
def tiny_webp() -> bytes:
    vp8l = b"\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"[:13]  # lossless 1x1 bitstream
    chunk = b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l + b"\x00" * (len(vp8l) % 2)
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


_NOT_AN_IMAGE = b"This is plain text, not an image.\n"


def static_files() -> dict[str, tuple[bytes, str]]:
    """name -> (body, content-type) of the fixed fixtures."""
    return {
        "tiny.png": (tiny_png(), "image/png"),
        "tiny.jpg": (tiny_jpeg(), "image/jpeg"),
        "tiny.gif": (tiny_gif(), "image/gif"),
        "tiny.webp": (tiny_webp(), "image/webp"),
        "png-as-text.txt": (tiny_png(), "text/plain"),
        "not-an-image.png": (_NOT_AN_IMAGE, "image/png"),
    }


# ---------------------------------------------------------------------------------------------
# What to send: a pure plan built from the answer and the case's upstream options


@dataclass(frozen=True)
class Answer:
    status: int
    headers: tuple[tuple[str, str], ...]  # lower-case names, hop-by-hop removed
    body: bytes
    sse: bool
    cassette: str | None = None
    interaction: int | None = None


@dataclass(frozen=True)
class Plan:
    status: int
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[tuple[float, bytes], ...]  # (seconds to wait before, bytes)
    first_byte_delay: float = 0.0
    abort: bool = False  # close the connection after the chunks instead of finishing the body
    fault: Mapping[str, Any] | None = None  # the fault options actually applied

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)


def split_events(body: bytes) -> list[bytes]:
    """SSE events with their terminating blank line; a trailing partial event is kept as is."""
    events: list[bytes] = []
    pos = 0
    for m in re.finditer(rb"\r?\n\r?\n", body):
        events.append(body[pos : m.end()])
        pos = m.end()
    if pos < len(body):
        events.append(body[pos:])
    return events


def error_event(kind: str | None, error: Mapping[str, Any]) -> bytes:
    if kind == "openai.chat":
        err = {"message": error.get("message", ""), "type": error.get("type"), "param": None, "code": None}
        return b"data: " + json.dumps({"error": err}).encode() + b"\n\n"
    return b"event: error\ndata: " + json.dumps({"type": "error", "error": dict(error)}).encode() + b"\n\n"


def error_body(kind: str | None, status: int, message: str, error_type: str | None = None) -> bytes:
    """A provider-style error envelope: OpenAI's on the chat channel, Anthropic's elsewhere."""
    etype = error_type or _ANTHROPIC_ERROR_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    if kind == "openai.chat":
        return json.dumps(
            {"error": {"message": message, "type": etype, "param": None, "code": None}}
        ).encode()
    return json.dumps({"type": "error", "error": {"type": etype, "message": message}}).encode()


def fault_answer(kind: str | None, fault: Mapping[str, Any]) -> Answer:
    status = int(fault["status"])
    body = fault.get("body")
    headers = {k.lower(): str(v) for k, v in (fault.get("headers") or {}).items()}
    if body is None:
        data = error_body(kind, status, f"gateway-conformance replay: injected {status}")
        ctype = "application/json"
    elif isinstance(body, str):
        data = body.encode("utf-8")
        try:
            json.loads(body)
            ctype = "application/json"
        except ValueError:
            ctype = "text/plain; charset=utf-8"
    else:
        data = json.dumps(body).encode()
        ctype = "application/json"
    headers.setdefault("content-type", ctype)
    return Answer(
        status=status,
        headers=tuple(headers.items()),
        body=data,
        sse=headers["content-type"].startswith("text/event-stream"),
    )


def _recut(pieces: list[tuple[float, bytes]], sizes: list[int]) -> list[tuple[float, bytes]]:
    """Re-cut the byte stream at the given sizes (cycled), keeping each delay at its byte offset."""
    out: list[tuple[float, bytes]] = []
    i = 0
    for delay, data in pieces:
        pending_delay = delay
        pos = 0
        while pos < len(data):
            size = sizes[i % len(sizes)]
            i += 1
            out.append((pending_delay, data[pos : pos + size]))
            pending_delay = 0.0
            pos += size
    return out


def plan_answer(answer: Answer, upstream: Mapping[str, Any], kind: str | None) -> Plan:
    fault = dict(upstream.get("fault") or {})
    applied: dict[str, Any] = {}
    headers = dict(answer.headers)
    if "status" not in fault and fault.get("headers"):
        headers.update({k.lower(): str(v) for k, v in fault["headers"].items()})
        applied["headers"] = fault["headers"]
    elif "status" in fault:
        applied.update({k: fault[k] for k in ("status", "body", "headers") if k in fault})

    body = answer.body
    if answer.sse:
        events = split_events(body)
        if "error_after_events" in fault:
            n = int(fault["error_after_events"])
            err = fault.get("error") or DEFAULT_STREAM_ERROR
            events = [*events[:n], error_event(kind, err)]
            applied["error_after_events"] = n
            applied["error"] = err
        pacing = float(upstream.get("pacing") or 0)
        pause = fault.get("pause_after_events")
        pieces = []
        for i, ev in enumerate(events):
            delay = pacing if i > 0 else 0.0
            if pause and i == int(pause["events"]):
                delay += float(pause["seconds"])
                applied["pause_after_events"] = pause
            pieces.append((delay, ev))
        if pause and int(pause["events"]) >= len(events):  # pause after the last event, before the end
            pieces.append((float(pause["seconds"]), b""))
            applied["pause_after_events"] = pause
    else:
        pieces = [(0.0, body)]

    rechunk = upstream.get("rechunk")
    if rechunk:
        pieces = _recut(pieces, [1] if rechunk == "bytewise" else [int(s) for s in rechunk])

    abort = False
    if "drop_after_bytes" in fault:
        limit = int(fault["drop_after_bytes"])
        kept: list[tuple[float, bytes]] = []
        sent = 0
        for delay, data in pieces:
            if sent >= limit:
                break
            take = data[: limit - sent]
            kept.append((delay, take))
            sent += len(take)
        pieces, abort = kept, True
        applied["drop_after_bytes"] = limit

    if answer.sse:
        headers.pop("content-length", None)  # chunked: the server frames each piece
    else:
        # The full length even when dropping: the client then sees a body cut short.
        headers["content-length"] = str(len(body))
    delay = float(fault.get("first_byte_delay") or 0)
    if delay:
        applied["first_byte_delay"] = delay
    return Plan(
        status=answer.status,
        headers=tuple(headers.items()),
        chunks=tuple(pieces),
        first_byte_delay=delay,
        abort=abort,
        fault=applied or None,
    )


def cassette_answer(cassette: Cassette, index: int) -> Answer:
    resp = cassette.interactions[index].response
    headers = tuple((k, v) for k, values in resp.headers.items() if k not in HOP_BY_HOP for v in values)
    return Answer(
        status=resp.status,
        headers=headers,
        body=resp.body,
        sse=resp.is_sse,
        cassette=cassette.name,
        interaction=index,
    )


# ---------------------------------------------------------------------------------------------
# State (touched from the server loop and, through ReplayServer, from other threads: one lock)


def normalize_marker(marker: str) -> str:
    m = marker.strip()
    if not m.startswith("["):
        m = f"[{m}]" if m.startswith("gc:") else f"[gc:{m}]"
    if not MARKER_RE.fullmatch(m):
        raise ReplayConfigError(f"not a case marker: {marker!r} (expected [gc:<rule-id>#<hex nonce>])")
    return m


def _encode_body(body: bytes) -> tuple[str, str]:
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), "base64"


def _validate_upstream(upstream: Any) -> dict[str, Any]:
    if upstream is None:
        return {}
    if not isinstance(upstream, dict):
        raise ReplayConfigError("upstream must be an object or null")
    unknown = set(upstream) - UPSTREAM_KEYS
    if unknown:
        raise ReplayConfigError(f"unknown upstream keys: {', '.join(sorted(unknown))}")
    fault = upstream.get("fault")
    if fault is not None:
        if not isinstance(fault, dict):
            raise ReplayConfigError("upstream.fault must be an object")
        bad = set(fault) - FAULT_KEYS
        if bad:
            raise ReplayConfigError(f"unknown fault keys: {', '.join(sorted(bad))}")
        if "status" in fault and not (isinstance(fault["status"], int) and 100 <= fault["status"] <= 599):
            raise ReplayConfigError("fault.status must be an integer 100-599")
    rechunk = upstream.get("rechunk")
    if (
        rechunk is not None
        and rechunk != "bytewise"
        and not (
            isinstance(rechunk, list) and rechunk and all(isinstance(s, int) and s >= 1 for s in rechunk)
        )
    ):
        raise ReplayConfigError(
            "upstream.rechunk must be 'bytewise' or a non-empty list of positive integers"
        )
    return dict(upstream)


@dataclass
class Case:
    marker: str
    rule: str
    upstream: dict[str, Any]
    cassette: Cassette | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    consumed: dict[tuple[int, ...], int] = field(default_factory=dict)


class ReplayState:
    def __init__(self, cassettes_dir: str | Path) -> None:
        self.cassettes_dir = Path(cassettes_dir)
        self._lock = threading.Lock()
        self._cases: dict[str, Case] = {}
        self._diagnostics: deque[dict[str, Any]] = deque(maxlen=_MAX_DIAGNOSTICS)
        self._fetches: deque[dict[str, Any]] = deque(maxlen=_MAX_DIAGNOSTICS)
        self._cassettes: dict[str, tuple[int, Cassette]] = {}
        self._seq = 0

    def _cassette(self, name: str) -> Cassette:
        path = self.cassettes_dir / f"{name}.yaml"
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            mtime = -1
        with self._lock:
            hit = self._cassettes.get(name)
        if hit and hit[0] == mtime:
            return hit[1]
        cassette = load_named(name, self.cassettes_dir)
        with self._lock:
            self._cassettes[name] = (mtime, cassette)
        return cassette

    def register(self, marker: str, rule: str, upstream: Any) -> Case:
        key = normalize_marker(marker)
        opts = _validate_upstream(upstream)
        cassette = None
        if opts.get("cassette"):
            try:
                cassette = self._cassette(str(opts["cassette"]))
            except CassetteError as exc:
                raise ReplayConfigError(f"cassette {opts['cassette']!r}: {exc.problem} ({exc.file})") from exc
        case = Case(marker=key, rule=rule, upstream=opts, cassette=cassette)
        with self._lock:
            self._cases[key] = case
        return case

    def forget(self, marker: str | None) -> int:
        with self._lock:
            if marker is None:
                n = len(self._cases)
                self._cases.clear()
                return n
            return 1 if self._cases.pop(normalize_marker(marker), None) else 0

    def case(self, marker: str) -> Case | None:
        with self._lock:
            return self._cases.get(normalize_marker(marker))

    def find_case(self, body: bytes) -> tuple[Case | None, list[str]]:
        """The registered case whose marker appears in `body`, and every marker seen."""
        text = body.decode("utf-8", errors="replace")
        found = MARKER_RE.findall(text)
        if not found:
            # A gateway may re-encode JSON (`\/`, `\u005b`): look at the decoded strings too.
            try:
                found = MARKER_RE.findall("\n".join(_strings(json.loads(text))))
            except ValueError:
                found = MARKER_RE.findall(text.replace("\\/", "/"))
        with self._lock:
            for m in found:
                if m in self._cases:
                    return self._cases[m], found
        return None, found

    def snapshot(self, marker: str) -> dict[str, Any] | None:
        with self._lock:
            case = self._cases.get(normalize_marker(marker))
            if case is None:
                return None
            return {"marker": case.marker, "rule": case.rule, "calls": [dict(c) for c in case.calls]}

    def add_call(self, case: Case, call: dict[str, Any]) -> None:
        with self._lock:
            case.calls.append(call)

    def next_interaction(self, case: Case, candidates: tuple[int, ...]) -> int:
        with self._lock:
            n = case.consumed.get(candidates, 0)
            case.consumed[candidates] = n + 1
        return candidates[min(n, len(candidates) - 1)]

    def diagnose(self, kind: str, message: str, path: str, body: bytes, **extra: Any) -> None:
        excerpt = redact_text(body[:240].decode("utf-8", errors="replace"))
        with self._lock:
            self._seq += 1
            entry = {
                "seq": self._seq,
                "kind": kind,
                "message": message,
                "path": path,
                "excerpt": excerpt,
                "at": time.time(),
                **extra,
            }
            self._diagnostics.append(entry)

    def diagnostics(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._diagnostics)

    def clear_diagnostics(self) -> None:
        with self._lock:
            self._diagnostics.clear()
            self._fetches.clear()

    def note_fetch(self, path: str, headers: Mapping[str, str]) -> None:
        with self._lock:
            self._fetches.append({"path": path, "user_agent": headers.get("user-agent"), "at": time.time()})

    def fetches(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._fetches)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


# ---------------------------------------------------------------------------------------------
# Sending a plan (the only I/O of the serving path)


class _DisconnectWatch:
    """Completes when the client goes away; sleeps end early then. Starts after the body was read."""

    def __init__(self, receive: Receive) -> None:
        self._task = asyncio.ensure_future(self._watch(receive))

    @staticmethod
    async def _watch(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def sleep(self, seconds: float) -> bool:
        """Sleep; True when the client disconnected meanwhile."""
        if seconds > 0:
            await asyncio.wait([self._task], timeout=seconds)
        return self._task.done()

    def close(self) -> None:
        self._task.cancel()


class PlanResponse(Response):
    def __init__(self, plan: Plan, on_disconnect: Callable[[int], None] | None = None) -> None:
        super().__init__(status_code=plan.status)
        self.plan = plan
        self.on_disconnect = on_disconnect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        plan = self.plan
        watch = _DisconnectWatch(receive)
        sent = 0
        try:
            if await watch.sleep(plan.first_byte_delay):
                self._gone(0)
                return
            raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in plan.headers]
            await send({"type": "http.response.start", "status": plan.status, "headers": raw_headers})
            for delay, data in plan.chunks:
                if await watch.sleep(delay):
                    self._gone(sent)
                    return
                if data:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                    sent += len(data)
                    # Yield so small re-cut chunks leave as separate writes rather than one burst.
                    await asyncio.sleep(0)
            if plan.abort:
                raise _DeliberateDrop(f"dropped after {sent} bytes")
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watch.close()

    def _gone(self, sent: int) -> None:
        if self.on_disconnect:
            self.on_disconnect(sent)


# ---------------------------------------------------------------------------------------------
# The app


def _header_dict(request: Request) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in request.headers.items():
        out[k] = f"{out[k]}, {v}" if k in out else v
    return out


def _served_record(plan: Plan, answer: Answer) -> dict[str, Any]:
    text, enc = _encode_body(plan.body)
    return {
        "status": plan.status,
        "headers": dict(plan.headers),
        "body": text,
        "body_encoding": enc,
        "cassette": answer.cassette,
        "interaction": answer.interaction,
        "fault": plan.fault,
    }


def build_app(state: ReplayState) -> Starlette:
    async def upstream(request: Request) -> Response:
        path = request.url.path
        kind = endpoint_kind(path)
        body = await request.body()
        if kind is None or request.method != "POST":
            state.diagnose("unknown-path", f"{request.method} {path} is not an upstream endpoint", path, body)
            msg = f"gateway-conformance replay: no upstream endpoint {request.method} {path}"
            return Response(error_body(kind, 404, msg, "not_found_error"), 404, media_type="application/json")

        case, seen = state.find_case(body)
        if case is None:
            if seen:
                diag, msg = (
                    "unknown-marker",
                    f"case marker {seen[0]} is not registered (stale or from another run)",
                )
            else:
                diag, msg = (
                    "unmarked",
                    "the request carries no case marker [gc:<rule>#<nonce>]; was the user text dropped?",
                )
            state.diagnose(diag, msg, path, body, markers=seen)
            return _error_response(kind, 400, f"gateway-conformance replay: {msg}")

        try:
            body_json = json.loads(body) if body else None
        except ValueError:
            body_json = None
        text, enc = _encode_body(body)
        call: dict[str, Any] = {
            "method": request.method,
            "path": path,
            "query": request.url.query,
            "headers": _header_dict(request),
            "body": text,
            "body_encoding": enc,
            "received_at": time.time(),
            "served": None,
        }
        fault = case.upstream.get("fault") or {}
        if "status" in fault:
            answer = fault_answer(kind, fault)
        elif case.cassette is None:
            answer = _scripted_error(kind, f"no upstream answer is scripted for rule {case.rule}")
        else:
            result = match(case.cassette, request.method, path, body_json)
            if not result.ok:
                msg = f"cassette {case.cassette.name}: {result.describe()}"
                state.diagnose("no-match", msg, path, body, marker=case.marker, rule=case.rule)
                answer = _scripted_error(kind, msg)
            else:
                answer = cassette_answer(case.cassette, state.next_interaction(case, result.candidates))
        plan = plan_answer(answer, case.upstream, kind)
        # Recorded before sending: the harness may ask as soon as the gateway has answered.
        call["served"] = _served_record(plan, answer)
        state.add_call(case, call)

        def on_disconnect(sent: int) -> None:
            call["served"] = {
                **call["served"],
                "body": _encode_body(plan.body[:sent])[0],
                "client_disconnected": True,
            }

        return PlanResponse(plan, on_disconnect)

    async def register(request: Request) -> Response:
        try:
            payload = await request.json()
        except ValueError:
            return JSONResponse({"error": "body must be JSON"}, 400)
        if not isinstance(payload, dict) or not isinstance(payload.get("marker"), str):
            return JSONResponse({"error": "expected {marker: str, rule: str, upstream: object|null}"}, 400)
        try:
            case = await asyncio.to_thread(
                state.register, payload["marker"], str(payload.get("rule") or ""), payload.get("upstream")
            )
        except ReplayConfigError as exc:
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"marker": case.marker, "rule": case.rule}, 201)

    def _marker_arg(request: Request) -> str | None:
        return request.query_params.get("marker")

    async def calls(request: Request) -> Response:
        marker = _marker_arg(request)
        if not marker:
            return JSONResponse({"error": "marker query parameter required"}, 400)
        try:
            snap = state.snapshot(marker)
        except ReplayConfigError as exc:
            return JSONResponse({"error": str(exc)}, 400)
        if snap is None:
            return JSONResponse({"error": f"unknown marker {marker}"}, 404)
        return JSONResponse(snap)

    async def forget(request: Request) -> Response:
        try:
            n = state.forget(_marker_arg(request))
        except ReplayConfigError as exc:
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"deleted": n})

    async def diagnostics(request: Request) -> Response:
        if request.method == "DELETE":
            state.clear_diagnostics()
        return JSONResponse({"diagnostics": state.diagnostics()})

    async def fetches(request: Request) -> Response:
        return JSONResponse({"fetches": state.fetches()})

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def files(request: Request) -> Response:
        name = request.path_params["name"]
        state.note_fetch(request.url.path, request.headers)
        return await _serve_file(request, name)

    routes = [
        Route("/__gc/health", health, methods=["GET"]),
        Route("/__gc/cases", register, methods=["POST"]),
        Route("/__gc/cases", forget, methods=["DELETE"]),
        Route("/__gc/calls", calls, methods=["GET"]),
        Route("/__gc/diagnostics", diagnostics, methods=["GET", "DELETE"]),
        Route("/__gc/fetches", fetches, methods=["GET"]),
        Route("/__gc/files/{name:path}", files, methods=["GET"]),
        Route("/{path:path}", upstream, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]
    return Starlette(routes=routes)


def _error_response(kind: str | None, status: int, message: str) -> Response:
    return Response(error_body(kind, status, message), status, media_type="application/json")


def _scripted_error(kind: str | None, message: str) -> Answer:
    body = error_body(kind, 400, f"gateway-conformance replay: {message}")
    return Answer(status=400, headers=(("content-type", "application/json"),), body=body, sse=False)


class _SlowBody(Response):
    """tiny.png after a delay that ends early when the client leaves (so shutdown never waits on it)."""

    def __init__(self, delay: float) -> None:
        super().__init__(status_code=200)
        self.delay = delay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        watch = _DisconnectWatch(receive)
        try:
            if await watch.sleep(self.delay):
                return
            data = tiny_png()
            headers = [(b"content-type", b"image/png"), (b"content-length", str(len(data)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": data, "more_body": False})
        finally:
            watch.close()


class _BigBody(Response):
    def __init__(self) -> None:
        super().__init__(status_code=200)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        head = _PNG_SIGNATURE + _PNG_IHDR_1X1
        headers = [(b"content-type", b"image/png"), (b"content-length", str(BIG_FILE_BYTES).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": head, "more_body": True})
        left = BIG_FILE_BYTES - len(head)
        block = b"\x00" * 65536
        while left > 0:
            piece = block[: min(left, len(block))]
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            left -= len(piece)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _serve_file(request: Request, name: str) -> Response:
    base = f"{str(request.base_url).rstrip('/')}/__gc/files"
    fixed = static_files()
    if name in fixed:
        data, ctype = fixed[name]
        return Response(data, 200, media_type=ctype)
    if name == "big.png":
        return _BigBody()
    if name == "slow.png":
        try:
            delay = float(request.query_params.get("delay", "20"))
        except ValueError:
            return Response("delay must be a number\n", 400, media_type="text/plain")
        return _SlowBody(delay)
    if name == "redirect-to":
        url = request.query_params.get("url")
        if not url:
            return Response("redirect-to needs ?url=\n", 400, media_type="text/plain")
        return Response(b"", 302, headers={"location": url})
    m = re.fullmatch(r"redirect/(\d+)/(.+)", name)
    if m:
        n, target = int(m.group(1)), m.group(2)
        if n == 0:
            return await _serve_file(request, target)
        nxt = f"{base}/{target}" if n == 1 else f"{base}/redirect/{n - 1}/{target}"
        return Response(b"", 302, headers={"location": nxt})
    return Response(f"no fixture named {name}\n", 404, media_type="text/plain")


# ---------------------------------------------------------------------------------------------
# Running it


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP. Without it,
    # Nagle holds the body behind the headers until the client's delayed ACK: +40 ms per kept-alive request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # accept (queue) connections as soon as the URL is known, before uvicorn starts
    except OSError:
        sock.close()
        raise
    return sock


def _config(app: Starlette, *, log_level: str, access_log: bool, log_config: Any = None) -> uvicorn.Config:
    logging.getLogger("uvicorn.error").addFilter(_DROP_FILTER)
    logging.getLogger("asyncio").addFilter(_HUNG_UP_FILTER)
    return uvicorn.Config(
        app,
        http="h11",  # the fault injection relies on h11's behaviour when the app aborts mid-body
        ws="none",
        lifespan="off",
        log_config=log_config,
        log_level=log_level,
        access_log=access_log,
        timeout_graceful_shutdown=2,
        server_header=False,  # the served answer is exactly what the cassette and faults say
        date_header=False,
    )


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class ReplayServer:
    """The replay upstream on a background thread with its own event loop.

    >>> with ReplayServer(cassettes_dir) as server:
    ...     server.url  # 'http://127.0.0.1:54321'
    """

    def __init__(
        self, cassettes_dir: str | Path | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.state = ReplayState(cassettes_dir if cassettes_dir is not None else paths.cassettes_dir())
        self.app = build_app(self.state)
        self.host = host
        self._requested_port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("ReplayServer is not running")
        return self._port

    @property
    def url(self) -> str:
        return _url(self.host, self.port)

    @property
    def images_url(self) -> str:
        return f"{self.url}/__gc/files"

    def start(self, timeout: float = 10.0) -> ReplayServer:
        if self._thread is not None:
            return self
        sock = _bind(self.host, self._requested_port)
        self._port = sock.getsockname()[1]
        server = uvicorn.Server(_config(self.app, log_level="warning", access_log=False))
        self._server = server
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            except BaseException as exc:  # reported to start(); a dying thread must not warn in pytest
                failure.append(exc)
            finally:
                sock.close()

        self._thread = threading.Thread(target=run, name=f"replay-upstream:{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"replay upstream did not start on {self.url}: {failure[:1]}")
            time.sleep(0.01)
        atexit.register(self.stop)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout)
        self._server = self._thread = None
        self._port = None
        atexit.unregister(self.stop)

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_upstream_main(argv: list[str] | None = None) -> int:
    """`gateway-conformance serve-upstream`: run the replay upstream in the foreground until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="gateway-conformance serve-upstream",
        description="Run the replay upstream (cassettes by case marker, fault injection, image fixtures) "
        "so a gateway started by hand can be pointed at it.",
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port to listen on (0 picks a free one; default 8765)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--cassettes", type=Path, default=None, help="cassettes directory (default: the bundled cassettes/)"
    )
    parser.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="allow binding a non-loopback address. Off by default: the control API lets anyone who can reach it "
        "register cases and read every request the gateway forwarded, including its upstream API key headers.",
    )
    args = parser.parse_args(argv)
    if not _is_loopback(args.host) and not args.allow_non_loopback:
        print(
            f"refusing to bind {args.host}: not a loopback address (pass --allow-non-loopback to override; "
            "anyone who can reach the port can read the forwarded requests and their API key headers)",
            file=sys.stderr,
        )
        return 2
    state = ReplayState(args.cassettes if args.cassettes is not None else paths.cassettes_dir())
    try:
        sock = _bind(args.host, args.port)
    except OSError as exc:
        print(f"cannot bind {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    url = _url(args.host, sock.getsockname()[1])
    print(f"replay upstream listening on {url} (cassettes: {state.cassettes_dir})")
    print(f"  Anthropic base URL for the gateway:           {url}   (it will POST {url}/v1/messages)")
    print(f"  OpenAI-compatible upstream base URL:          {url}/v1")
    print(f"  image fixtures (${{images_url}}):              {url}/__gc/files")
    print(f"  then: pytest --gateway-url <your gateway's OpenAI base URL> --replay-url {url}")
    print("Ctrl-C to stop.", flush=True)
    server = uvicorn.Server(
        _config(build_app(state), log_level="info", access_log=True, log_config=uvicorn.config.LOGGING_CONFIG)
    )
    # uvicorn re-raises the Ctrl-C it already handled gracefully; that is the normal way out.
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    print("replay upstream stopped.")
    return 0


__all__ = [
    "MARKER_RE",
    "Answer",
    "Plan",
    "ReplayConfigError",
    "ReplayServer",
    "ReplayState",
    "build_app",
    "plan_answer",
    "serve_upstream_main",
    "split_events",
]
