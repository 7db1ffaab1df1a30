"""specs/clients/scenarios.yaml: it loads, every provider script exists and loads, every not-applicable
sentence is the doc's own, and the loader refuses what a driver could not run."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cassette.document import load_named
from harness.clients.scenarios import load_scenarios, parse_catalog
from harness.errors import ScenarioError
from harness.paths import cassettes_dir, specs_root
from harness.spec import load_profile
from tests.specs.test_coverage import doc_text

CATALOG = load_scenarios()


def test_the_issue_scenarios_are_all_there() -> None:
    assert [s.id for s in CATALOG.scenarios] == [
        "text", "stream-text", "tool-round-trip", "parallel-tools-stream", "structured-output",
        "stream-usage", "rate-limit", "rate-limit-retry", "auth", "mid-stream-error",
    ]  # fmt: skip


@pytest.mark.parametrize("scenario", CATALOG.scenarios, ids=lambda s: s.id)
def test_each_provider_script_loads_and_is_honest(scenario: Any) -> None:
    given = scenario.upstream["cassette"]
    for family, name in given.items() if isinstance(given, dict) else [("anthropic", given)]:
        assert name.startswith(f"clients/{family}/")  # each family's answer in its own folder
        assert load_named(name, cassettes_dir()).interactions
        assert (cassettes_dir() / f"{name}.yaml").read_text().startswith("metadata:\n  origin: synthesized")


def test_each_profile_names_a_role_it_has() -> None:
    for name, use in CATALOG.profiles.items():
        assert use.role in load_profile(name, specs_root()).models


@pytest.mark.parametrize(
    ("scenario", "profile"),
    [(s.id, p) for s in CATALOG.scenarios for p in s.not_applicable],
)
def test_a_not_applicable_sentence_is_the_docs_own(scenario: str, profile: str) -> None:
    na = CATALOG.scenario(scenario).not_applicable[profile]
    doc = doc_text(load_profile(profile, specs_root()).doc)  # the doc ships beside its profile
    assert na.quote in doc
    assert any(line.lstrip("#").strip() == na.section for line in doc.splitlines() if line.startswith("#"))


BASE: dict[str, Any] = {"scenarios": [{"id": "a", "expect": {"text": "x"}}]}
BAD = [
    ("no-list", {}, "scenarios"),
    ("no-expect", {"scenarios": [{"id": "a"}]}, "expect"),
    ("unknown-expect", {"scenarios": [{"id": "a", "expect": {"txt": "x"}}]}, "unknown expect"),
    ("bad-error-kind", {"scenarios": [{"id": "a", "expect": {"error": {"kind": "teapot"}}}]}, "kind"),
    (
        "unknown-tool",
        {"scenarios": [{"id": "a", "tools": ["nope"], "expect": {"text": "x"}}]},
        "unknown tools",
    ),
    (
        "unknown-object",
        {"scenarios": [{"id": "a", "object": "Nope", "expect": {"text": "x"}}]},
        "unknown object",
    ),
    ("bad-field-type", {"objects": {"O": {"f": "date"}}, **BASE}, "type"),
    ("duplicate", {"scenarios": [BASE["scenarios"][0], BASE["scenarios"][0]]}, "unique"),
]


@pytest.mark.parametrize(("data", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_the_loader_refuses(data: Any, words: str) -> None:
    with pytest.raises(ScenarioError, match=words):
        parse_catalog(data)


CASSETTES = sorted(
    {
        name
        for s in CATALOG.scenarios
        for name in (
            s.upstream["cassette"].values()
            if isinstance(s.upstream["cassette"], dict)
            else [s.upstream["cassette"]]
        )
    }
)


@pytest.mark.parametrize("name", CASSETTES)
def test_provider_scripts_answer_both_modes_and_name_every_event(name: str) -> None:
    """A library may stream or not: both are scripted, in every family's script. wire-reference §1.7: an Anthropic
    (and a Responses) event is named after its data.type, one blank line after each; OpenAI's and Gemini's are
    `data:` lines."""
    import json

    cassette = load_named(name, cassettes_dir())
    assert {it.request.stream for it in cassette.interactions} == {False, True}
    named = name.startswith(("clients/anthropic/", "clients/responses/"))
    for interaction in cassette.interactions:
        if not interaction.response.is_sse:
            continue
        text = interaction.response.body.decode("utf-8").replace("\r\n", "\n")
        assert text.endswith("\n\n")
        for block in text[:-2].split("\n\n"):
            if named:
                event, data = block.split("\n")
                assert json.loads(data[6:])["type"] == event[7:]
            else:
                assert block.startswith("data: ") and (block == "data: [DONE]" or json.loads(block[6:]))
