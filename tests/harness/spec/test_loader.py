"""The spec loader: every shipped file validates; a malformed rule names file, line and problem."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from harness.errors import SpecError
from harness.paths import specs_dir
from harness.spec import load_profile, load_rule_file, placeholders_in
from harness.spec.loader import available_profiles
from harness.spec.selection import rule_files

SPECS = specs_dir()


def _write(tmp_path: Path, text: str, name: str = "rules.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


GOOD = """\
source: {doc: ezat-chat-completions, section: "Ignored and refused fields"}
rules:
  - id: demo/refuse/n-above-1
    level: MUST
    title: n above 1 is refused
    source: {quote: "`n` above 1"}
    request:
      body: {model: $MODEL, n: 2, messages: [{role: user, content: hi}]}
    variants: {stream: [false, true]}
    expect:
      status: 400
      error: {type: invalid_request_error, code: null, message: "n: only 1 choice per request is supported"}
      upstream_calls: 0
      stream_order: {done: required}
"""


def test_good_rule_file_loads_with_defaults_and_needs(tmp_path: Path) -> None:
    rule = load_rule_file(_write(tmp_path, GOOD)).rules[0]
    assert rule.id == "demo/refuse/n-above-1"
    assert rule.source.doc == "ezat-chat-completions"
    assert rule.source.section == "Ignored and refused fields"
    assert rule.line == 3
    assert rule.needs.models == {"MODEL"}
    assert rule.needs.replay is True  # upstream_calls reads the replay upstream
    assert rule.variant_combos() == [{"stream": False}, {"stream": True}]
    assert "stream_order" not in rule.expect_for({"stream": False})
    assert "stream_order" in rule.expect_for({"stream": True})


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("source: {doc: x, section: y}\nrules:\n  - id: [unclosed\n", 4, "invalid YAML"),
        (GOOD.replace("level: MUST", "level: SHALL"), 4, "'SHALL' is not one of"),
        (GOOD.replace("status: 400", "status: '400'"), 11, "status"),
        (GOOD.replace("upstream_calls: 0", "upstream_callz: 0"), 13, "upstream_callz"),
        (GOOD.replace("id: demo/refuse/n-above-1", "id: Not An Id"), 3, "does not match"),
        ("", 1, "empty rule file"),
        (GOOD + GOOD.split("rules:\n", 1)[1], 15, "duplicate rule id"),
    ],
    ids=["yaml-syntax", "bad-level", "status-type", "unknown-check", "bad-id", "empty", "duplicate-id"],
)
def test_malformed_rule_file_names_file_line_and_problem(
    tmp_path: Path, text: str, line: int, fragment: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(SpecError) as excinfo:
        load_rule_file(path)
    err = excinfo.value
    assert err.file == str(path)
    assert err.line == line, str(err)
    assert fragment in err.problem
    assert str(err).startswith(f"{path}:{line}: ")


def test_when_overrides_apply_per_variant(tmp_path: Path) -> None:
    text = GOOD.replace(
        "      stream_order: {done: required}\n",
        "      stream_order: {done: required}\n    when:\n      - variant: {stream: true}\n        expect: {status: 200}\n",
    )
    rule = load_rule_file(_write(tmp_path, text)).rules[0]
    assert rule.expect_for({"stream": True})["status"] == 200
    assert rule.expect_for({"stream": False})["status"] == 400


def test_placeholders_found_anywhere() -> None:
    value = {"model": "$MODEL_SAMPLING", "messages": [{"content": "$MARKER see $MODEL"}]}
    assert sorted(set(placeholders_in(value))) == ["MODEL", "MODEL_SAMPLING"]


# --- every shipped file ------------------------------------------------------------------------------


SCHEMAS = sorted((SPECS / "schema").rglob("*.schema.json"))


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.name for p in SCHEMAS])
def test_shipped_json_schemas_are_valid(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema).check_schema(schema)


PROFILES = available_profiles()


@pytest.mark.parametrize("profile", PROFILES)
def test_shipped_profiles_validate(profile: str) -> None:
    loaded = load_profile(profile)
    assert loaded.name == profile
    assert "MODEL" in loaded.models


RULE_FILES = [p for profile in PROFILES for p in rule_files(SPECS / profile)]


@pytest.mark.parametrize("path", RULE_FILES, ids=[str(p.relative_to(SPECS)) for p in RULE_FILES])
def test_shipped_rule_files_validate(path: Path) -> None:
    rule_file = load_rule_file(path)
    profile = load_profile(path.parent.name)
    for rule in rule_file.rules:
        assert rule.profile == profile.name
        unknown = rule.needs.models - set(profile.models)
        assert not unknown, f"{rule.id}: model roles not in {profile.name}/profile.yaml: {sorted(unknown)}"
        undeclared = (rule.needs.features | rule.needs.without) - set(profile.features)
        assert not undeclared, f"{rule.id}: features not in {profile.name}/profile.yaml: {sorted(undeclared)}"


def test_rule_ids_are_unique_across_the_catalog() -> None:
    seen: dict[str, str] = {}
    for path in RULE_FILES:
        for rule in load_rule_file(path).rules:
            for name in (rule.id, *rule.aliases):
                assert name not in seen, f"{name} in {path} and {seen[name]}"
                seen[name] = str(path)


def test_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(SpecError, match="unknown profile 'nope'"):
        load_profile("nope")


THEN = """\
source: {doc: relay-chat-completions, section: "Caching & idempotency"}
rules:
  - id: demo/caching/replay
    level: MUST
    title: a repeat is replayed
    source: {quote: "Idempotency-Replayed: true"}
    request:
      headers: {idempotency-key: $MARKER}
      body: {model: $MODEL, messages: [{role: user, content: hi}]}
    needs: {harness: [then]}
    expect: {status: 200}
    then:
      - request: {headers: {x-relay-cache: "no"}}
        expect:
          headers: {idempotency-replayed: {equals: "true"}}
          upstream_calls: 1
"""


def test_then_steps_and_harness_needs_are_carried(tmp_path: Path) -> None:
    rule = load_rule_file(_write(tmp_path, THEN)).rules[0]
    assert rule.needs.harness == {"then"}
    assert [step["expect"]["upstream_calls"] for step in rule.then] == [1]
    assert rule.then[0]["request"] == {"headers": {"x-relay-cache": "no"}}
    assert rule.needs.replay, "an upstream check in a step needs the replay upstream"


@pytest.mark.parametrize(
    ("edit", "capability"),
    [
        (lambda t: t.replace("    needs: {harness: [then]}\n", ""), "then"),
        (lambda t: t.replace("upstream_calls: 1", "upstream_path: [{matches: 'x'}]"), "upstream_path"),
        (
            lambda t: t.replace(
                "content: hi", "content: [{type: image_url, image_url: {url: '${data_url:image/png:9}'}}]"
            ),
            "data_url",
        ),
    ],
)
def test_a_capability_used_but_not_declared_is_refused(tmp_path: Path, edit, capability: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError, match=f"uses .*{capability}.*declare it in needs.harness"):
        load_rule_file(_write(tmp_path, edit(THEN)))


def test_unknown_harness_capability_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="needs/harness"):
        load_rule_file(_write(tmp_path, THEN.replace("harness: [then]", "harness: [then, teleport]")))
