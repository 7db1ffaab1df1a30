"""Mutants as data: `catalog.yaml` read into frozen `Mutant` values, every operation checked on load."""

from __future__ import annotations

import fnmatch
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from harness.errors import MutantCatalogError, OpError
from harness.mutants.ops.edits import check_edit
from harness.mutants.ops.paths import holds
from harness.mutants.ops.stream import check_stream_op

CATALOG = Path(__file__).with_name("catalog.yaml")
Side = Literal["client", "upstream"]
_KEYS = frozenset(
    {
        "id",
        "side",
        "area",
        "profiles",
        "models",
        "title",
        "when",
        "request",
        "request_headers",
        "drop_query",
        "decode_reads",
        "status",
        "headers",
        "json",
        "chunks",
        "answer",
        "stream",
        "replace",
        "error_as_stream",
        "features",
        "delay",
        "connect_image_urls",
        "upgrade",
        "socket",
        "killed_by",
        "survives_because",
    }
)
_WHEN_KEYS = frozenset({"request", "status", "stream", "request_json", "path", "transport"})


@dataclass(frozen=True)
class Mutant:
    id: str
    side: Side
    area: str
    title: str
    models: (
        str  # the real bug it models: `owner/repo#N` from docs/real-gateway-bugs.md, or why it is plausible
    )
    profiles: tuple[str, ...] = ("ezat",)
    when: Mapping[str, Any] | None = (
        None  # gates the answer-side mutations of one exchange, and (`request`, `stream`) the request-side edits
    )
    request: tuple[Mapping[str, Any], ...] = ()  # edits of the request body on its way through
    request_headers: Mapping[str, Any] | None = None
    drop_query: tuple[str, ...] = ()  # query parameters of the client's request left out (client side)
    status: Mapping[Any, Any] | None = None
    headers: Mapping[str, Any] | None = None
    json: tuple[Mapping[str, Any], ...] = ()  # edits of a JSON answer (success or error)
    chunks: tuple[Mapping[str, Any], ...] = ()  # edits of each SSE data payload
    stream: tuple[Mapping[str, Any], ...] = ()  # stream ops, in order
    replace: Mapping[str, Any] | None = None  # answer with this status and JSON body instead
    error_as_stream: bool = False  # an HTTP error to a streaming request becomes a 200 SSE stream
    features: tuple[str, ...] = ()  # harness features the rules that catch it need (e.g. slow)
    delay: float = 0.0  # seconds the answer is held before it is sent (a gateway that first tried something)
    # Client side: the proxy opens a TCP connection to every http(s) image URL's host before forwarding (a
    # gateway that connects before it checks the address).
    connect_image_urls: bool = False
    # A streamed answer decoded as UTF-8 one network read at a time, each read on its own (a code point split
    # between two reads becomes U+FFFD): a gateway that decodes every read by itself (api7/aisix#111).
    decode_reads: bool = False
    # Over a WebSocket (client side; harness/mutants/socket_relay.py): the upgrade refused with this
    # {status, body} instead of forwarded (a gateway whose route does not take the upgrade), and the socket as the
    # gateway keeps it ({close_after_turns: N}: closed once N turns have ended).
    upgrade: Mapping[str, Any] | None = None
    socket: Mapping[str, Any] | None = None
    killed_by: tuple[str, ...] = ()  # rules expected to kill it: tried first with --first-kill
    survives_because: str | None = None

    @property
    def touches_answer(self) -> bool:
        return bool(
            self.status
            or self.headers
            or self.json
            or self.chunks
            or self.stream
            or self.replace
            or self.error_as_stream
            or self.delay
            or self.decode_reads
            or self.upgrade
            or self.socket
        )

    @property
    def touches_stream(self) -> bool:
        return bool(self.chunks or self.stream or self.decode_reads)

    def request_applies(self, client: Any, path: str | None = None, transport: str = "http") -> bool:
        """Whether the request-side edits apply: `when.request` and `when.stream` read the client's request
        (a status is not known yet), `when.path` the request's path, `when.transport` how it came (`http`, or
        `websocket`: a turn on a socket). Without them, every request."""
        when = self.when or {}
        if not _path_applies(when, path) or when.get("transport", transport) != transport:
            return False
        if "request" in when and not holds(client, when["request"]):
            return False
        return not (
            "stream" in when
            and bool(isinstance(client, dict) and client.get("stream") is True) != when["stream"]
        )

    def on_socket(self, path: str | None) -> bool:
        """Whether the mutant may apply to a WebSocket on this path at all (`when.path`, `when.transport`); each
        of its turns is then gated as a request is (`request_applies`, `applies`)."""
        when = self.when or {}
        return _path_applies(when, path) and when.get("transport", "websocket") == "websocket"

    def applies(
        self,
        client: Any,
        status: int | None,
        invalid_json: bool = False,
        path: str | None = None,
        transport: str = "http",
    ) -> bool:
        """Whether the answer-side mutations apply to this exchange."""
        when = self.when or {}
        if not _path_applies(when, path) or when.get("transport", transport) != transport:
            return False
        if when.get("request_json") == "invalid" and not invalid_json:
            return False
        if "status" in when and status not in when["status"]:
            return False
        if "request" in when and not holds(client, when["request"]):
            return False
        return not (
            "stream" in when
            and bool(isinstance(client, dict) and client.get("stream") is True) != when["stream"]
        )


def _path_applies(when: Mapping[str, Any], path: str | None) -> bool:
    """`when.path`: a regular expression searched in the request's path (None: the path is not known, as for a
    recorded exchange read without one: the mutant is taken to apply)."""
    return "path" not in when or path is None or re.search(str(when["path"]), path) is not None


def _edits(raw: Any, where: str) -> tuple[Mapping[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise MutantCatalogError(f"{where}: expected a list of edits")
    for edit in raw:
        try:
            check_edit(edit)
        except OpError as exc:
            raise MutantCatalogError(f"{where}: {exc}") from exc
    return tuple(raw)


def mutant_from(raw: Mapping[str, Any]) -> Mutant:
    mid = str(raw.get("id", "?"))
    unknown = set(raw) - _KEYS
    if unknown:
        raise MutantCatalogError(f"mutant {mid}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("id", "side", "area", "title", "models"):
        if not raw.get(key):
            raise MutantCatalogError(f"mutant {mid}: {key} is required")
    if raw["side"] not in ("client", "upstream"):
        raise MutantCatalogError(f"mutant {mid}: side is client or upstream")
    when = raw.get("when")
    if when is not None and (not isinstance(when, Mapping) or set(when) - _WHEN_KEYS):
        raise MutantCatalogError(f"mutant {mid}: when takes {', '.join(sorted(_WHEN_KEYS))}")
    answer = _edits(raw.get("answer"), f"{mid}.answer")
    stream = tuple(raw.get("stream") or ())
    for op in stream:
        try:
            check_stream_op(op)
        except OpError as exc:
            raise MutantCatalogError(f"{mid}.stream: {exc}") from exc
    mutant = Mutant(
        id=mid,
        side=raw["side"],
        area=str(raw["area"]),
        title=str(raw["title"]),
        models=str(raw["models"]),
        profiles=tuple(raw.get("profiles") or ("ezat",)),
        when=when,
        request=_edits(raw.get("request"), f"{mid}.request"),
        request_headers=raw.get("request_headers"),
        drop_query=tuple(str(q) for q in raw.get("drop_query") or ()),
        status=raw.get("status"),
        headers=raw.get("headers"),
        json=_edits(raw.get("json"), f"{mid}.json") + answer,
        chunks=_edits(raw.get("chunks"), f"{mid}.chunks") + answer,
        stream=stream,
        replace=raw.get("replace"),
        error_as_stream=bool(raw.get("error_as_stream", False)),
        features=tuple(raw.get("features") or ()),
        delay=float(raw.get("delay") or 0.0),
        connect_image_urls=bool(raw.get("connect_image_urls", False)),
        decode_reads=bool(raw.get("decode_reads", False)),
        upgrade=raw.get("upgrade"),
        socket=raw.get("socket"),
        killed_by=tuple(raw.get("killed_by") or ()),
        survives_because=raw.get("survives_because"),
    )
    if not (
        mutant.request
        or mutant.request_headers
        or mutant.drop_query
        or mutant.touches_answer
        or mutant.connect_image_urls
    ):
        raise MutantCatalogError(f"mutant {mid}: changes nothing")
    return mutant


@dataclass(frozen=True)
class MutantCatalog:
    mutants: tuple[Mutant, ...]
    unmutated: Mapping[str, str]  # rule id (glob) → why no mutant can make it fail


def load_catalog(path: Path = CATALOG) -> MutantCatalog:
    # libyaml's safe loader when PyYAML has it (the same values, a tenth of the time for this 1.3k-line file).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    if not isinstance(data, Mapping) or not isinstance(data.get("mutants"), list):
        raise MutantCatalogError(f"{path}: expected a mapping with a `mutants` list")
    mutants = [mutant_from(m) for m in data["mutants"]]
    seen: set[str] = set()
    for m in mutants:
        if m.id in seen:
            raise MutantCatalogError(f"duplicate mutant id {m.id}")
        seen.add(m.id)
    return MutantCatalog(tuple(mutants), dict(data.get("unmutated") or {}))


def select(
    mutants: Sequence[Mutant],
    profile: str,
    patterns: Sequence[str] = (),
    sample: int | None = None,
    seed: int = 6,
    always: Sequence[str] = (),
) -> list[Mutant]:
    """Mutants of a profile matching the globs; `sample` picks N at random (fixed seed) plus `always`."""
    chosen = [
        m
        for m in mutants
        if profile in m.profiles and (not patterns or any(fnmatch.fnmatchcase(m.id, p) for p in patterns))
    ]
    if sample is not None and sample < len(chosen):
        keep = {m.id for m in random.Random(seed).sample(chosen, sample)} | set(always)
        chosen = [m for m in chosen if m.id in keep]
    return chosen
