"""A tiny fake inbound API, "Echo", as a harness surface of a test's own: proof that a surface is data plus one
adapter. Nothing in harness/ knows it; a profile names it as `surface: tests.harness.surfaces.echo:SURFACE`.

The API: `POST {base}/echo` with `{"model": …, "say": "…", "stream": bool}`. The answer is
`{"kind": "echo", "reply": "…", "usage": {"in": N, "out": M}}`; a stream is named events, `event: piece` with
`{"kind": "piece", "text": "…"}` for each part of the reply, then one `event: end` with `{"kind": "end",
"usage": {…}}`, and no sentinel. An error is `{"error": {"message": "…", "type": "…"}}`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.base import Surface
from harness.surfaces.reading import StreamView
from harness.values import short
from harness.violation import Violation, no_response


def _assemble(view: StreamView) -> dict[str, Any]:
    pieces = [p.json for p in view.payloads if p.is_object and p.json.get("kind") == "piece"]
    end = next((p.json for p in view.payloads if p.is_object and p.json.get("kind") == "end"), {})
    return {
        "kind": "echo",
        "reply": "".join(str(p.get("text", "")) for p in pieces),
        "usage": end.get("usage"),
    }


def _error_document(exchange: Exchange) -> tuple[Any, str] | Violation:
    parsed = reading.parse_json(exchange.response.raw)
    if not parsed.ok:
        return Violation(
            "error", "$", "an Echo error", short(exchange.response.raw), f"body is {parsed.error}"
        )
    return parsed.value, "$"


def _envelope(document: Any, where: str, check: str) -> Iterator[Violation]:
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        yield Violation(check, where, {"error": {"message": "…"}}, short(document), "not an Echo error")


def _insert_marker(body: Any, marker: str) -> Any:
    if not isinstance(body, Mapping) or not isinstance(body.get("say"), str):
        return body
    return {**body, "say": f"{marker} {body['say']}"}


def _grow_text(body: Any, token: str) -> Any:
    out = copy.deepcopy(dict(body))
    out["say"] += " " + token
    return out


def check_stream_order(expected: Any, exchange: Exchange) -> Iterator[Violation]:
    """Echo's grammar: every event named after its data's `kind`, pieces first, exactly one `end`, last."""
    missing = no_response("stream_order", exchange)
    if missing:
        yield missing
        return
    payloads = reading.stream_view(exchange.response.raw).payloads
    kinds = []
    for payload in payloads:
        kind = payload.json.get("kind") if payload.is_object else None
        if payload.event.event != kind:
            where = f"stream[{payload.event.index}]"
            yield Violation("stream_order", where, kind, payload.event.event, "event: is not the data's kind")
        kinds.append(kind)
    if kinds.count("end") != 1 or kinds[-1:] != ["end"]:
        yield Violation(
            "stream_order", "stream", "pieces, then one end", kinds, "the stream does not end once"
        )


SURFACE = Surface(
    name="echo",
    title="Echo (a test surface)",
    label="echo",
    endpoint="echo",
    base_url_example="http://127.0.0.1:8080/api",
    sentinel=None,
    answer_schema="echo.answer",
    error_schema="echo.error",
    payload_schema=lambda payload: "echo.event",
    assemble=_assemble,
    error_document=_error_document,
    envelope=_envelope,
    insert_marker=_insert_marker,
    grow_text=_grow_text,
    apply_variant=lambda body, variant: {**body, **variant},
    checks={"stream_order": check_stream_order},
    output_limit_fields=("max_out",),
    hello={"say": "Say hello."},  # the smallest Echo request: what certify's preflight sends before a verdict
)
