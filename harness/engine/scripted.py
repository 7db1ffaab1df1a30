"""The scripted answers of a rule: its cassette's interactions as (status, body text), read from disk. The
live forms (harness/engine/live.py) judge with them and stay pure; the caller reads and may keep them."""

from __future__ import annotations

from pathlib import Path

from harness.engine.live import ScriptedAnswers
from harness.spec.model import Rule


def cassette_texts(name: str, root: Path | None = None) -> ScriptedAnswers:
    """(status, body text) of each interaction of a cassette (empty when it cannot be read)."""
    from harness.cassette.document import load_named
    from harness.errors import CassetteError
    from harness.paths import cassettes_dir

    try:
        cassette = load_named(name, root or cassettes_dir())
    except (CassetteError, OSError):
        return ()
    return tuple(
        (i.response.status, i.response.body.decode("utf-8", "replace")) for i in cassette.interactions
    )


def scripted_answers(rule: Rule, root: Path | None = None) -> ScriptedAnswers:
    """The scripted answers of the rule's upstream cassette, or of each cassette of its set (one per family);
    empty when it names none."""
    named = (rule.upstream or {}).get("cassette")
    names = list(named.values()) if isinstance(named, dict) else [named] if named else []
    return tuple(t for name in names for t in cassette_texts(str(name), root))
