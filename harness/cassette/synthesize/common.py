"""What every generator shares: the deterministic ids (base-62 digits of a name's sha256, so regenerating gives
the same bytes) and what a generated cassette is before it is written."""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from typing import Any

B62 = string.digits + string.ascii_letters


def rand(name: str, salt: str, n: int) -> str:
    """`n` base-62 characters derived from `name` and `salt`: the same on every run."""
    num = int.from_bytes(hashlib.sha256(f"{name}/{salt}".encode()).digest(), "big")
    out = []
    for _ in range(n):
        num, r = divmod(num, 62)
        out.append(B62[r])
    return "".join(out)


@dataclass(frozen=True)
class Synthesized:
    """One cassette as a generator builds it: its name under cassettes/, its provenance, its interactions (vcrpy's
    dict form)."""

    name: str  # e.g. `anthropic/text-basic`
    metadata: dict[str, Any]
    interactions: list[dict[str, Any]]


def ok_pair(
    requests: tuple[dict[str, Any], dict[str, Any]],
    bodies: tuple[str, str],
    headers: tuple[dict[str, list[str]], dict[str, list[str]]],
) -> list[dict[str, Any]]:
    """A cassette's two 200 interactions (non-stream, then stream) in vcrpy's dict form."""
    return [
        {
            "request": request,
            "response": {"body": {"string": body}, "headers": head, "status": {"code": 200, "message": "OK"}},
        }
        for request, body, head in zip(requests, bodies, headers, strict=True)
    ]


# The patch a model hands Codex's `apply_patch` (a custom, freeform tool: its input is this text, in Codex's patch
# grammar, never JSON); the quotes and line breaks need escaping wherever it travels inside JSON.
PATCH = (
    "*** Begin Patch\n*** Update File: greet.py\n@@\n"
    '-print("Hello")\n+print("Hello, GC-PATCH-u4Jc!")\n*** End Patch'
)


def json_pieces(text: str) -> list[str]:
    """A JSON text cut as a provider streams it, two of the cuts just after a backslash (inside an escape sequence),
    where a gateway that decodes each piece by itself goes wrong."""
    slashes = [i for i, c in enumerate(text) if c == "\\"]
    cuts = sorted({12, slashes[0] + 1, slashes[3] + 1, len(text) - 8})
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def text_pieces(text: str) -> list[str]:
    """A free text cut two lines at a time, line breaks kept (a custom tool's input deltas)."""
    lines = text.splitlines(keepends=True)
    return ["".join(lines[i : i + 2]) for i in range(0, len(lines), 2)]
