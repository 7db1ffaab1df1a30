"""Names a user types (a feature, a client, a scenario, a model role) checked against the names that exist: a
name that matches nothing is bad configuration (exit 3), said with the known names and the closest ones."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence


def closest(name: str, known: Iterable[str]) -> str:
    """'did you mean a or b? ' for a near miss, '' when nothing is close."""
    close = difflib.get_close_matches(name, list(known), n=2)
    return f"did you mean {' or '.join(close)}? " if close else ""


def unmatched(patterns: Sequence[str], known: Sequence[str]) -> list[str]:
    """The patterns (exact names or shell globs) that match none of the known names."""
    return [p for p in patterns if not any(fnmatch.fnmatchcase(k, p) for k in known)]


def unknown_message(option: str, name: str, known: Sequence[str], what: str) -> str:
    """`--client anthropic-pyton` matches no client: did you mean anthropic-python? the clients: …"""
    return (
        f"{option} {name!r} matches no {what}: {closest(name, known)}the {what}s: {', '.join(sorted(known))}"
    )
