"""The coverage ledgers (specs/coverage/<profile>.yaml) against their docs and the rule catalogs.

Every quote of a ledger and every rule's `source.quote` must occur verbatim in the doc it cites; every rule id
in a ledger must exist; every rule of a profile must appear in that profile's ledger. The docs ship beside their profiles
(`specs/<profile>/<doc>.md`), so none of these checks skips on a fresh clone.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.spec import load_rule_file
from harness.spec.selection import rule_files

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
LEDGERS = sorted((SPECS / "coverage").glob("*.yaml"))


@cache
def doc_text(name: str) -> str:
    found = sorted(SPECS.glob(f"*/{name}.md"))
    assert found, f"no {name}.md beside any profile under {SPECS}"
    path = found[0]
    return path.read_text(encoding="utf-8")


@cache
def ledger(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@cache
def catalog(profile: str) -> dict[str, object]:
    """Rule id → rule, for every rule file of a profile."""
    rules = {}
    for path in rule_files(SPECS / profile):
        for rule in load_rule_file(path).rules:
            rules[rule.id] = rule
    return rules


def all_profiles() -> list[str]:
    return sorted(p.parent.name for p in SPECS.glob("*/profile.yaml"))


def rules_with_quotes() -> list[object]:
    return [rule for profile in all_profiles() for rule in catalog(profile).values()]


def profiles_with_rules() -> list[str]:
    return [p for p in all_profiles() if any(rule_files(SPECS / p))]


def test_there_is_a_ledger_for_ezat() -> None:
    assert (SPECS / "coverage" / "ezat.yaml").is_file()


@pytest.mark.parametrize("profile", profiles_with_rules())
def test_every_profile_with_rules_has_a_ledger(profile: str) -> None:
    """A catalog without a ledger would skip every check below; each profile with rules needs one."""
    assert (SPECS / "coverage" / f"{profile}.yaml").is_file(), f"specs/coverage/{profile}.yaml is missing"


def test_the_ledger_tests_cover_every_profile_with_a_ledger() -> None:
    assert {p.stem for p in LEDGERS} >= set(profiles_with_rules())
    assert {p.stem for p in LEDGERS} <= set(all_profiles()), (
        "a ledger names a profile that has no profile.yaml"
    )


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_ledger_rule_ids_belong_to_the_profile(path: Path) -> None:
    data = ledger(path)
    prefix = f"{data['profile']}/"
    foreign = sorted({r for s in data["sentences"] for r in s.get("rules", ()) if not r.startswith(prefix)})
    assert not foreign, f"rule ids of another profile in the {data['profile']} ledger: {foreign}"


@pytest.mark.parametrize("profile", profiles_with_rules())
def test_rule_ids_start_with_their_profile(profile: str) -> None:
    wrong = sorted(rule_id for rule_id in catalog(profile) if not rule_id.startswith(f"{profile}/"))
    assert not wrong, f"rules in specs/{profile}/ whose id names another profile: {wrong}"


@pytest.mark.parametrize("profile", profiles_with_rules())
def test_rule_roles_and_features_are_declared_in_the_profile(profile: str) -> None:
    """Every `$ROLE` a rule uses and every feature it needs is described in specs/<profile>/profile.yaml."""
    declared = yaml.safe_load((SPECS / profile / "profile.yaml").read_text(encoding="utf-8"))
    roles, features = set(declared.get("models", {})), set(declared.get("features", {}))
    problems = []
    for rule in catalog(profile).values():
        for role in sorted(set(rule.needs.models) - roles):
            problems.append(f"{rule.id}: model role {role} is not in the profile")
        for feature in sorted((set(rule.needs.features) | set(rule.needs.without)) - features):
            problems.append(f"{rule.id}: feature {feature} is not in the profile")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_ledger_validates_against_its_schema(path: Path) -> None:
    schema = json.loads((SPECS / "schema" / "coverage.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(ledger(path)), key=lambda e: list(e.path)
    )
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors)


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_ledger_profile_and_doc_match_the_profile(path: Path) -> None:
    data = ledger(path)
    assert data["profile"] == path.stem
    profile = yaml.safe_load((SPECS / path.stem / "profile.yaml").read_text(encoding="utf-8"))
    assert data["doc"] == profile["doc"]


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_every_ledger_quote_occurs_in_the_doc(path: Path) -> None:
    data = ledger(path)
    # A sentence of a contract the profiles share (specs/features/gateway-features.md) names its doc.
    missing = [s["quote"] for s in data["sentences"] if s["quote"] not in doc_text(s.get("doc", data["doc"]))]
    assert not missing, "quotes not found verbatim in the doc:\n" + "\n".join(missing)


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_every_ledger_rule_id_exists(path: Path) -> None:
    data = ledger(path)
    known = catalog(data["profile"])
    unknown = sorted({r for s in data["sentences"] for r in s.get("rules", ()) if r not in known})
    assert not unknown, f"rule ids in the ledger that no rule file defines: {unknown}"


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_every_rule_appears_in_the_ledger(path: Path) -> None:
    data = ledger(path)
    listed = {r for s in data["sentences"] for r in s.get("rules", ())}
    unlisted = sorted(set(catalog(data["profile"])) - listed)
    assert not unlisted, f"rules that no ledger sentence maps to: {unlisted}"


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_ledger_quotes_are_unique(path: Path) -> None:
    seen: dict[tuple[str, str], int] = {}
    for s in ledger(path)["sentences"]:
        key = (s["section"], s["quote"])
        seen[key] = seen.get(key, 0) + 1
    assert not [k for k, n in seen.items() if n > 1]


@pytest.mark.parametrize("rule", rules_with_quotes(), ids=lambda r: r.id)
def test_rule_quote_occurs_in_its_doc(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.source.quote in doc_text(rule.source.doc), f"{rule.file}:{rule.line}: quote not in the doc"


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_ledger_sections_are_doc_headings(path: Path) -> None:
    data = ledger(path)
    unknown = sorted(
        {
            s["section"]
            for s in data["sentences"]
            if s["section"] not in doc_headings(doc_text(s.get("doc", data["doc"])))
        }
    )
    assert not unknown, f"sections that are not headings of the doc: {unknown}"


def doc_headings(text: str) -> set[str]:
    """`## Heading` lines (ezat, lyrouter), or `#Heading` lines as the relay doc writes them; a doc whose first
    line is not a heading has that line as its page title, which holds the introduction."""
    lines = text.splitlines()
    if any(line.startswith("## ") for line in lines):
        return {line.lstrip("#").strip() for line in lines if line.startswith("## ")}
    headings = {
        line.lstrip("#").strip() for line in lines if line.startswith("#") and line.lstrip("#").strip()
    }
    title = next((line.strip() for line in lines if line.strip()), "")
    return headings | ({title} if title and not title.startswith("#") else set())


def test_doc_headings_both_styles() -> None:
    assert doc_headings("# T\n\n## A\ntext\n## B\n") == {"A", "B"}
    assert doc_headings("Chat completions\n\nintro\n#Request\nx\n#Tool calling\n") == {
        "Chat completions",
        "Request",
        "Tool calling",
    }


@pytest.mark.parametrize("path", LEDGERS, ids=lambda p: p.stem)
def test_ledger_totals(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ledger(path)
    sentences = data["sentences"]
    mapped = sum(1 for s in sentences if "rules" in s)
    excluded = sum(1 for s in sentences if "excluded" in s)
    assert mapped + excluded == len(sentences)
    with capsys.disabled():
        print(
            f"\n{path.stem}: {len(sentences)} sentences, {mapped} mapped, {excluded} excluded, "
            f"{len(catalog(data['profile']))} rules"
        )


def test_the_gateway_protocol_ledger_names_rules_that_exist_or_proposes_them() -> None:
    """specs/coverage/anthropic-gateway-protocol.md holds profile anthropic against Claude Code's `GET /protocol`:
    every rule it names as judging a requirement exists; a name that does not is a proposed rule (a GAP row)."""
    import re

    known = {
        rule["id"]
        for path in (ROOT / "specs" / "anthropic").glob("*.yaml")
        for rule in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("rules", [])
    }
    page = (ROOT / "specs" / "coverage" / "anthropic-gateway-protocol.md").read_text(encoding="utf-8")
    for line in page.splitlines():
        for name in re.findall(r"anthropic/[a-z0-9-]+/[a-z0-9-]+(?!\*)\b", line):
            if name not in known:
                assert "GAP" in line or "propose" in line or re.match(r"\d+\. `", line), (name, line[:120])
