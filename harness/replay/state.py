"""The replay upstream's state: registered cases by marker, the calls each received, diagnostics.

Touched from the server loop and, through ReplayServer, from other threads: one lock.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cassette.document import Cassette, load_named, redact_text
from harness.errors import CassetteError, ReplayConfigError
from harness.families import FAMILIES
from harness.outcomes import MARKER_RE

UPSTREAM_BLOCK_KEYS = frozenset({"cassette", "fault", "pacing", "rechunk", "rechunk_gap", "echo_model"})
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
        "first_deployment_only",  # the fault answers the case's first deployment only (app._for_deployment)
    }
)
_MAX_DIAGNOSTICS = 10000  # bounded memory for a long-running serve-upstream; entries carry `seq`


# State (touched from the server loop and, through ReplayServer, from other threads: one lock)


def normalize_marker(marker: str) -> str:
    m = marker.strip()
    if not m.startswith("["):
        m = f"[{m}]" if m.startswith("gc:") else f"[gc:{m}]"
    if not MARKER_RE.fullmatch(m):
        raise ReplayConfigError(f"not a case marker: {marker!r} (expected [gc:<rule-id>#<hex nonce>])")
    return m


def encode_body(body: bytes) -> tuple[str, str]:
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), "base64"


def _validate_upstream(upstream: Any) -> dict[str, Any]:
    if upstream is None:
        return {}
    if not isinstance(upstream, dict):
        raise ReplayConfigError("upstream must be an object or null")
    unknown = set(upstream) - UPSTREAM_BLOCK_KEYS
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
    cassette = upstream.get("cassette")
    if isinstance(cassette, dict):
        bad = set(cassette) - set(FAMILIES)
        if bad or not cassette or not all(isinstance(v, str) and v for v in cassette.values()):
            raise ReplayConfigError(
                "upstream.cassette as a set maps provider families (anthropic, openai, gemini) to cassette names"
            )
    elif cassette is not None and not isinstance(cassette, str):
        raise ReplayConfigError("upstream.cassette must be a cassette name or a {family: name} set")
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
    gap = upstream.get("rechunk_gap")
    if gap is not None and (rechunk is None or not isinstance(gap, int | float) or not 0 < gap <= 1):
        raise ReplayConfigError("upstream.rechunk_gap (seconds, at most 1) needs upstream.rechunk")
    return dict(upstream)


@dataclass
class Case:
    marker: str
    rule: str
    upstream: dict[str, Any]
    cassette: Cassette | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    # A cassette set: each family's own cassette; `cassette` is then None and `for_family` picks one.
    family_cassettes: dict[str, Cassette] = field(default_factory=dict)
    consumed: dict[tuple[int, ...], int] = field(default_factory=dict)
    # OpenAI Responses: the responses this case's answers created with `store` not false, by id, each with the
    # Response object `GET /v1/responses/{id}` answers: the ones a later `previous_response_id` may name
    # (api.openai.com keeps those and only those, until they are deleted).
    kept_responses: dict[str, bytes] = field(default_factory=dict)
    # Every Responses id this case's answers carried, kept or not: a later request naming one is this case's.
    issued_responses: set[str] = field(default_factory=set)
    # A kept response's input items (the request's `input`; a string is one user message), for `…/input_items`.
    kept_inputs: dict[str, list[Any]] = field(default_factory=dict)
    # The deployment (endpoint path and model) of the case's first call: a fault with `first_deployment_only`
    # answers only the calls to it, so a fallback to another deployment is served from the cassette.
    first_deployment: str | None = None

    def for_family(self, family: str | None) -> Cassette | None:
        """The cassette that answers a call to `family`'s endpoint: the set's entry, else the one cassette."""
        if self.family_cassettes:
            return self.family_cassettes.get(family or "")
        return self.cassette


class ReplayState:
    def __init__(self, cassettes_dir: str | Path) -> None:
        self.cassettes_dir = Path(cassettes_dir)
        self._lock = threading.Lock()
        self._cases: dict[str, Case] = {}
        # Every OpenAI Responses id a case's answer carried, with that case: a request that continues one (or GET,
        # DELETE, lists its input items) need not carry the case marker, since the conversation it names does (as
        # api.openai.com finds a conversation by its id).
        self._issued: dict[str, Case] = {}
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

    def loaded(self, upstream: Any) -> bool:
        """Whether every cassette `upstream` names is already in memory (registering it reads no file)."""
        named = upstream.get("cassette") if isinstance(upstream, dict) else None
        names = named.values() if isinstance(named, dict) else ([named] if named else [])
        with self._lock:
            return all(str(name) in self._cassettes for name in names)

    def register(self, marker: str, rule: str, upstream: Any) -> Case:
        key = normalize_marker(marker)
        opts = _validate_upstream(upstream)
        cassette = None
        family_cassettes: dict[str, Cassette] = {}
        named = opts.get("cassette")
        names = named if isinstance(named, dict) else ({"": named} if named else {})
        for family, name in names.items():
            try:
                loaded = self._cassette(str(name))
            except CassetteError as exc:
                raise ReplayConfigError(f"cassette {name!r}: {exc.problem} ({exc.file})") from exc
            if family:
                family_cassettes[family] = loaded
            else:
                cassette = loaded
        case = Case(
            marker=key, rule=rule, upstream=opts, cassette=cassette, family_cassettes=family_cassettes
        )
        with self._lock:
            self._cases[key] = case
        return case

    def forget(self, marker: str | None) -> int:
        with self._lock:
            if marker is None:
                n = len(self._cases)
                self._cases.clear()
                self._issued.clear()
                return n
            case = self._cases.pop(normalize_marker(marker), None)
            if case is not None:
                self._drop_issued(case)
            return 1 if case else 0

    def _drop_issued(self, case: Case) -> None:
        for rid in case.issued_responses:
            if self._issued.get(rid) is case:
                del self._issued[rid]

    def issue_response(
        self, case: Case, rid: str, kept: bytes | None, inputs: list[Any] | None = None
    ) -> None:
        """A Responses answer's id noted for its case, and kept with the Response object `kept` and its request's
        input items when not None (api.openai.com keeps a response unless it was created with store false)."""
        with self._lock:
            case.issued_responses.add(rid)
            self._issued[rid] = case
            if kept is not None:
                case.kept_responses[rid] = kept
                case.kept_inputs[rid] = list(inputs or [])

    def issuing_case(self, rid: str) -> Case | None:
        """The case whose answer carried the response id `rid` (kept or not), or None (never issued here, or its
        case forgotten)."""
        with self._lock:
            return self._issued.get(rid)

    def kept_case(self, rid: str) -> Case | None:
        """The case that keeps the response `rid`, or None (never kept, deleted, or its case forgotten)."""
        with self._lock:
            case = self._issued.get(rid)
            return case if case is not None and rid in case.kept_responses else None

    def delete_kept(self, rid: str) -> bool:
        with self._lock:
            case = self._issued.get(rid)
            if case is None or case.kept_responses.pop(rid, None) is None:
                return False
            case.kept_inputs.pop(rid, None)
            return True

    def take(self, marker: str) -> dict[str, Any] | None:
        """snapshot() and forget() at once: a rule's last look at its calls (one control call, not two)."""
        with self._lock:
            case = self._cases.pop(normalize_marker(marker), None)
            if case is None:
                return None
            self._drop_issued(case)
            return {"marker": case.marker, "rule": case.rule, "calls": [dict(c) for c in case.calls]}

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
