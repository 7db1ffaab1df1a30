"""Static checks of the rule catalogs and the cassettes they name: every file loads, every JSONPath parses,
every cassette a rule names exists, loads, carries provenance and no secret, and answers both stream flags."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from harness.cassette import load_named
from harness.checks.matchers import find
from harness.paths import cassettes_dir
from harness.spec import load_rule_file, rule_files

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
PROFILES = sorted(p.parent.name for p in SPECS.glob("*/profile.yaml"))
RULE_FILES = [path for profile in PROFILES for path in rule_files(SPECS / profile)]
PATH_KINDS = ("json", "chunks", "upstream")


@cache
def _load(path: Path):  # type: ignore[no-untyped-def]
    return load_rule_file(path)


def all_rules() -> list[object]:
    return [rule for path in RULE_FILES for rule in _load(path).rules]


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rule_file_loads(path: Path) -> None:
    assert _load(path).rules


def test_rule_ids_are_unique_across_files() -> None:
    seen: dict[str, str] = {}
    for path in RULE_FILES:
        for rule in _load(path).rules:
            assert rule.id not in seen, f"{rule.id} in {path} and {seen[rule.id]}"
            seen[rule.id] = str(path)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_rule_paths_parse(rule) -> None:  # type: ignore[no-untyped-def]
    for expect in (rule.expect, *(w["expect"] for w in rule.when)):
        for kind in PATH_KINDS:
            for assertion in expect.get(kind, ()):
                find({}, assertion["path"])  # raises PathError on a bad RFC 9535 path


def _cassette_names() -> list[str]:
    names = set()
    for rule in all_rules():
        if rule.upstream and "cassette" in rule.upstream:
            names.add(rule.upstream["cassette"])
    return sorted(names)


@pytest.mark.parametrize("name", _cassette_names())
def test_named_cassette_loads(name: str) -> None:
    cassette = load_named(name, cassettes_dir())
    assert cassette.metadata.origin in ("recorded", "synthesized")
    flags = {it.request.stream for it in cassette.interactions}
    assert flags == {False, True}, f"{name}: needs a non-streaming and a streaming interaction, has {flags}"


ANTHROPIC = sorted((ROOT / "cassettes" / "anthropic").glob("*.yaml"))


@pytest.mark.parametrize("path", ANTHROPIC, ids=lambda p: p.stem)
def test_synthesized_sse_bodies_name_every_event(path: Path) -> None:
    """wire-reference §1.7: every event has an `event:` line equal to data.type, one blank line after each."""
    import json

    cassette = load_named(f"anthropic/{path.stem}", cassettes_dir())
    for interaction in cassette.interactions:
        if not interaction.response.is_sse:
            continue
        text = interaction.response.body.decode("utf-8")
        assert text.endswith("\n\n")
        for block in text[:-2].split("\n\n"):
            event, data = block.split("\n")
            assert event.startswith("event: ") and data.startswith("data: ")
            assert json.loads(data[6:])["type"] == event[7:]
