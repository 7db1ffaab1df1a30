"""Beyond one request (specs/README.md, "Beyond one request"): the `then` steps a rule sends after its first
request, and the `${data_url:<media type>:<bytes>}` payloads it cannot spell out. Pure: no I/O.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections.abc import Mapping
from typing import Any

from harness.checks import Violation, views
from harness.exchange import Exchange

# The capabilities of `needs.harness` this harness implements (harness.spec.model.HARNESS_CAPABILITIES).
IMPLEMENTED = frozenset({"then", "upstream_path", "data_url", "websocket"})

DATA_URL_RE = re.compile(r"\$\{data_url:([A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+):(\d+)\}")
_FIRST_RE = re.compile(r"\$\{(first\.response\.(?:headers|body)\.[^{}]+)\}")


def _png_head() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


_HEADS = {
    "image/png": _png_head(),
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
    "image/gif": b"GIF89a\x01\x00\x01\x00\x00\x00\x00",
    "application/pdf": b"%PDF-1.4\n",
}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(size: int) -> bytes | None:
    """A valid PNG of exactly `size` bytes: one pixel, padded with a private ancillary chunk (`gcPd`: a lower-case
    first letter means decoders skip it), so a real provider decodes it in live mode. None when too small."""
    pixel = zlib.compress(b"\x00\x00\x00\x00\x00")  # filter byte + one RGBA pixel
    head = _png_head()
    tail = _chunk(b"IDAT", pixel) + _chunk(b"IEND", b"")
    filler = size - len(head) - len(tail) - 12
    if filler < 0:
        return None
    return head + _chunk(b"gcPd", b"\x00" * filler) + tail


def data_url(media_type: str, size: int) -> str:
    """A `data:` URL whose payload decodes to exactly `size` bytes: a whole PNG (padded inside), or the type's
    header then zero filler."""
    payload = _png(size) if media_type == "image/png" else None
    if payload is None:
        head = _HEADS.get(media_type, b"")[:size]
        payload = head + b"\x00" * (size - len(head))
    return f"data:{media_type};base64,{base64.b64encode(payload).decode('ascii')}"


def expand_data_urls(text: str) -> str:
    return DATA_URL_RE.sub(lambda m: data_url(m.group(1), int(m.group(2))), text)


def step_request(
    headers: Mapping[str, str], body: Any, step: Mapping[str, Any], marker: str | None
) -> tuple[dict[str, str], Any]:
    """The first rendered request's headers and body with the step's `request` merged in (a copy)."""
    merged_headers = dict(headers)
    request = step.get("request") or {}
    for name, value in (request.get("headers") or {}).items():
        if value is None:
            merged_headers.pop(name.lower(), None)
        else:
            merged_headers[name.lower()] = str(value).replace("$MARKER", marker or "")
    merged_body = body
    if isinstance(body, Mapping) and isinstance(request.get("body"), Mapping):
        merged_body = {**body, **_with_marker(request["body"], marker or "")}
    return merged_headers, merged_body


def _with_marker(value: Any, marker: str) -> Any:
    """`$MARKER` in a step's body strings is the case's marker (a step that replaces the whole input keeps it)."""
    if isinstance(value, str):
        return value.replace("$MARKER", marker)
    if isinstance(value, Mapping):
        return {k: _with_marker(v, marker) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_marker(v, marker) for v in value]
    return value


def _first_value(ref: str, first: Exchange) -> Any:
    if ref.startswith("first.response.headers."):
        return first.response.headers.get(ref.removeprefix("first.response.headers.").lower())
    value: Any = views.gateway_answer(first).document
    for segment in ref.removeprefix("first.response.body.").split("."):
        if (
            isinstance(value, list)
            and segment.lstrip("-").isdigit()
            and -len(value) <= int(segment) < len(value)
        ):
            value = value[int(segment)]
        elif isinstance(value, Mapping) and segment in value:
            value = value[segment]
        else:
            return None
    return value


def resolve_first(value: Any, first: Exchange) -> Any:
    """`${first.response.headers.<name>}` / `${first.response.body.<dotted.path>}` in a step's expect."""
    if isinstance(value, str):
        whole = _FIRST_RE.fullmatch(value)
        if whole:
            return _first_value(whole.group(1), first)

        def text(m: re.Match[str]) -> str:
            found = _first_value(m.group(1), first)
            return found if isinstance(found, str) else json.dumps(found)

        return _FIRST_RE.sub(text, value)
    if isinstance(value, Mapping):
        return {k: resolve_first(v, first) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_first(v, first) for v in value]
    return value


def label(step: int, violation: Violation) -> Violation:
    """A step's violation, named after its step (`then[0].json $.id`)."""
    return Violation(
        violation.check, f"then[{step}].{violation.path}", violation.expected, violation.actual,
        f"then[{step}]: {violation.message}",
    )  # fmt: skip
