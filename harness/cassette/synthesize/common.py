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
