"""Which rule variants a mutant can change: its ops replayed over the baseline run's recorded exchanges.

A mutant is a pure function of the traffic it sees (`harness.mutants.ops`: no clock, no randomness),
except two effects the bytes do not show: a `delay` reaches every variant whose answer it applies to, and
`connect_image_urls` every variant that sends an image URL. If that function is the identity on every message
of a rule variant's baseline exchanges (the first request, its `then` steps, its stream_matches_nonstream
companion) — the client's request and the gateway's answer (client side), or each request the gateway made
upstream and the answer it got (upstream side) — then the run through the mutant sends the same bytes in the
same order as the baseline did, and its outcome is the baseline's: no need to run it again. Only where the
answer is unknown (no recorded exchange, a truncated or cut answer, a header the harness does not see) does
`reaches` say yes, so a reused outcome is never a guess.

Pure: it reads the recorded `Outcome` values only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from harness.engine.target import Outcome
from harness.exchange import Exchange, UpstreamCall
from harness.mutants.catalog import Mutant
from harness.mutants.ops.edits import Context, apply_edits
from harness.mutants.ops.events import parse_block, split_sse
from harness.mutants.ops.http import edit_headers, map_status
from harness.mutants.ops.stream import TIMED_STREAM_OPS, StreamRewriter
from harness.outcomes import MARKER_RE_BYTES
from harness.redact import KEY_PLACEHOLDER

# Headers the HTTP clients and servers on the way add or rewrite themselves: the recorded exchange does
# not show them as the proxy sees them, so an edit naming one always counts as a change.
TRANSPORT_HEADERS = frozenset(
    {
        "host",
        "accept",
        "accept-encoding",
        "connection",
        "user-agent",
        "content-length",
        "content-type",
        "transfer-encoding",
        "date",
        "server",
    }
)


class _Invalid:
    """A client body that is not JSON (as the proxy sees it, for `when: {request_json: invalid}`)."""


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def reaches(mutant: Mutant, baseline: Outcome) -> bool:
    """Whether the mutant could make this rule variant's run differ from its baseline run."""
    if baseline.outcome == "NOT_APPLICABLE":
        return False  # not applicable depends on the target alone: it is so in every run
    exchange = baseline.exchange
    if exchange is None:
        return True
    # The rule's `then` steps are exchanges of the same variant: a mutant that changes only a repeat (the
    # replayed answer's headers, a cache HIT) reaches the variant as surely as one that changes the first.
    exchanges = [exchange, *exchange.steps] + ([exchange.companion] if exchange.companion is not None else [])
    if mutant.side == "client":
        return any(_client_reaches(mutant, ex) for ex in exchanges)
    return any(_upstream_reaches(mutant, ex) for ex in exchanges)


def reached(mutant: Mutant, baselines: Iterable[Outcome]) -> list[bool]:
    return [reaches(mutant, b) for b in baselines]


def _client_reaches(mutant: Mutant, ex: Exchange) -> bool:
    if ex.request.transport == "websocket":
        return _socket_reaches(mutant, ex)
    if mutant.upgrade is not None or mutant.socket is not None:
        return False  # mutations of a WebSocket only
    body = ex.request.body
    parsed = _parse(body)
    client: Any = parsed if parsed is not None or not body else _Invalid()
    ctx = Context(client=None if isinstance(client, _Invalid) else client)
    path = urlsplit(ex.request.url).path
    if (
        mutant.request
        and isinstance(parsed, (dict, list))
        and mutant.request_applies(None if isinstance(client, _Invalid) else client, path)
        and _request_changes(parsed, mutant, ctx)
    ):
        return True
    if (
        mutant.request_headers
        and mutant.request_applies(None if isinstance(client, _Invalid) else client, path)
        and _headers_change(ex.request.headers, mutant.request_headers)
    ):
        return True
    if mutant.drop_query and any(
        part.split("=", 1)[0] in mutant.drop_query
        for part in urlsplit(ex.request.url).query.split("&")
        if part
    ):
        return True  # a query parameter the gateway is made to ignore
    if mutant.connect_image_urls and b"image_url" in body:
        return True  # the proxy's own connection to the image host (a `listener` rule) is not in the bytes
    if not mutant.touches_answer:
        return False
    response = ex.response
    if response.status is None:
        return False  # no answer reached the proxy's client: nothing of it to rewrite
    invalid = isinstance(client, _Invalid)
    if not mutant.applies(None if invalid else client, response.status, invalid_json=invalid, path=path):
        return False
    if mutant.delay:
        return True  # an answer held back (`elapsed`, timeouts): timing is not in the recorded bytes
    if response.truncated or response.transport_error:
        return True
    return _answer_changes(mutant, client, response.status, response.headers, response.raw)


def _socket_reaches(mutant: Mutant, ex: Exchange) -> bool:
    """A turn on a WebSocket as the proxy's relay sees it (harness/mutants/socket_relay.py): the upgrade refused
    or the socket closed (always a change), the client's message edited, the turn's events rewritten; what the
    relay does not apply to a socket (statuses, headers, JSON answers, replacements, delays) changes nothing."""
    if mutant.upgrade is not None or mutant.socket is not None:
        return True
    parsed = _parse(ex.request.body)
    if not mutant.on_socket(urlsplit(ex.request.url).path):
        return False  # gated off sockets, or off this path
    if mutant.request_headers and _headers_change(ex.request.headers, mutant.request_headers):
        return True
    if (
        mutant.request
        and isinstance(parsed, (dict, list))
        and mutant.request_applies(parsed, transport="websocket")
        and _request_changes(parsed, mutant, Context(client=parsed))
    ):
        return True
    response = ex.response
    if not (mutant.chunks or mutant.stream) or response.status is None:
        return False
    if not mutant.applies(parsed, response.status, transport="websocket"):
        return False
    if response.truncated or response.transport_error:
        return True
    return _stream_changes(mutant, parsed, response.status, response.raw)


def _upstream_reaches(mutant: Mutant, ex: Exchange) -> bool:
    if ex.upstream is None:
        return True  # the upstream side was not observed (no case marker): cannot tell
    # The upstream proxy finds the client's request by the case marker in what the gateway sent.
    client = _parse(ex.request.body) if MARKER_RE_BYTES.search(ex.request.body) else None
    return any(_call_reaches(mutant, call, client) for call in ex.upstream)


def _call_reaches(mutant: Mutant, call: UpstreamCall, client: Any) -> bool:
    if KEY_PLACEHOLDER.encode() in call.body:
        return True  # the recorded body is redacted: not the bytes the proxy saw
    ctx = Context(client=client)
    parsed = _parse(call.body)
    if (
        mutant.request
        and isinstance(parsed, (dict, list))
        and mutant.request_applies(client, call.path)
        and _request_changes(parsed, mutant, ctx)
    ):
        return True
    if (
        mutant.request_headers
        and mutant.request_applies(client, call.path)
        and _headers_change(call.headers, mutant.request_headers)
    ):
        return True
    if not mutant.touches_answer:
        return False
    served = call.served
    if served is None:
        return True
    if not mutant.applies(client, served.status, path=call.path):
        return False
    if "drop_after_bytes" in (served.fault or {}):
        return True  # a cut answer: the proxy's rewriting path reads it otherwise than its pass-through
    return _answer_changes(mutant, client, served.status, served.headers, served.body)


def _request_changes(parsed: Any, mutant: Mutant, ctx: Context) -> bool:
    """Whether the request edits change the body as the proxy sends it: its content, or only its key order
    (`reverse` of an object: equal as a dict, other bytes on the wire)."""
    new = apply_edits(parsed, mutant.request, ctx)
    return bool(new != parsed or _encoded(new) != _encoded(parsed))


def _encoded(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _headers_change(headers: Mapping[str, str], spec: Mapping[str, Any]) -> bool:
    if spec.get("copy_from_client"):
        return True  # the client's own headers (its key) are not in the recorded call: cannot tell
    names = {str(h).lower() for h in spec.get("drop", ())} | {
        str(h).lower() for h in (spec.get("rename") or {})
    }
    if (names | {str(h).lower() for h in (spec.get("set") or {})}) & TRANSPORT_HEADERS:
        return True
    pairs = [(k.lower(), v) for k, v in headers.items()]
    return sorted(edit_headers(pairs, spec)) != sorted(pairs)


def _answer_changes(
    mutant: Mutant, client: Any, status: int, headers: Mapping[str, str], body: bytes
) -> bool:
    """The proxy's `_relay` without I/O: does the rewrite change the status, a header or a byte?"""
    if mutant.replace is not None:
        return True
    is_sse = headers.get("content-type", "").startswith("text/event-stream")
    if (
        mutant.error_as_stream
        and status >= 400
        and not is_sse
        and isinstance(client, dict)
        and client.get("stream")
    ):
        return True
    if mutant.status and map_status(status, mutant.status) != status:
        return True
    if mutant.headers and _headers_change(headers, mutant.headers):
        return True
    if is_sse:
        return mutant.touches_stream and _stream_changes(mutant, client, status, body)
    if mutant.json:
        doc = _parse(body)
        if doc is not None and apply_edits(doc, mutant.json, Context(client, status)) != doc:
            return True
    return False


def _stream_changes(mutant: Mutant, client: Any, status: int, body: bytes) -> bool:
    """Whether the event rewriter changes, holds back or adds any event of this stream.

    Identity means: each event, fed alone, comes out alone and re-encodes to its own bytes (so nothing
    is delayed either), the stream ends on a complete event, and the end flushes nothing.
    """
    if any(op.get("op") in TIMED_STREAM_OPS for op in mutant.stream):
        return True  # timing is not in the recorded bytes
    if mutant.decode_reads:
        # Where the network reads fall is not in the recorded bytes: any multi-byte character may be split.
        return not body.isascii()
    blocks, rest = split_sse(body)
    if rest.strip() or b"\r" in body:
        return True
    rewriter = StreamRewriter(mutant.chunks, mutant.stream, Context(client, status))
    out = bytearray()
    for block in blocks:
        if not block.strip(b"\n"):
            continue
        event = parse_block(block.strip(b"\n"))
        emitted = rewriter.feed(event)
        if len(emitted) != 1 or emitted[0] != event:
            return True
        out += emitted[0].encode()
    if rewriter.end():
        return True
    return bytes(out) != body
