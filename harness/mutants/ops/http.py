"""Statuses and headers rewritten: a status mapped through a table, headers set, dropped or renamed. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def map_status(status: int, table: Mapping[Any, Any]) -> int:
    return int(table.get(status, table.get(str(status), status)))


def edit_headers(
    headers: Sequence[tuple[str, str]],
    spec: Mapping[str, Any],
    client: Sequence[tuple[str, str]] = (),
) -> list[tuple[str, str]]:
    """`{drop: [names], set: {name: value}, rename: {old: new}, copy_from_client: [names]}` on lower-cased header
    pairs; `copy_from_client` (upstream side) sets each named header to the value the client sent the gateway (a
    gateway that forwards the client's key)."""
    drop = {h.lower() for h in spec.get("drop", ())}
    rename = {k.lower(): v.lower() for k, v in (spec.get("rename") or {}).items()}
    out = [(rename.get(k.lower(), k.lower()), v) for k, v in headers if k.lower() not in drop]
    for name, value in (spec.get("set") or {}).items():
        out = [(k, v) for k, v in out if k != name.lower()] + [(name.lower(), str(value))]
    sent = {k.lower(): v for k, v in client}
    for name in spec.get("copy_from_client") or ():
        if name.lower() in sent:
            out = [(k, v) for k, v in out if k != name.lower()] + [(name.lower(), sent[name.lower()])]
    return out
