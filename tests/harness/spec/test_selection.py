"""harness/spec/selection.py, the one owner of which rules a run selects: rule files, skipped folders (relative to
the specs root, never by the absolute path's parts), `--rule` globs, a run's variants; and the plugin's
collection through it — a checkout under a folder named `coverage` or `docs` still collects every rule."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.paths import specs_dir
from harness.replay.server import ReplayServer
from harness.spec import load_rule_file
from harness.spec.loader import available_profiles
from harness.spec.model import Needs, Rule, Source
from harness.spec.selection import (
    SKIP_DIRS,
    collection_root,
    is_rule_file,
    profile_rules,
    rule_files,
    rule_selected,
    run_variants,
)
from tests.harness.plugin.test_plugin import CASSETTES, RULES
from tests.harness.tiny_gateways import KEY, make_gateway, serve

SPECS = specs_dir()


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(CASSETTES) as server:
        yield server


PROFILES = [p for p in available_profiles() if rule_files(SPECS / p)]


def _catalog(root: Path) -> dict[str, list[str]]:
    return {p: sorted(r.id for r in profile_rules([root / p], p) or []) for p in PROFILES}


def test_skipped_folders_are_read_relative_to_the_root(tmp_path: Path) -> None:
    root = tmp_path / "coverage" / "docs" / "specs"
    assert is_rule_file(root / "ezat" / "a.yaml", root)
    assert is_rule_file(root / "ezat" / "a.yml", root)
    assert not is_rule_file(root / "ezat" / "profile.yaml", root)
    assert not is_rule_file(root / "ezat" / "notes.md", root)
    for folder in SKIP_DIRS:
        assert not is_rule_file(root / folder / "ezat.yaml", root)
        assert not is_rule_file(root / "ezat" / folder / "x.yaml", root)
    assert is_rule_file(tmp_path / "elsewhere" / "coverage" / "x.yaml", root)  # outside the root: its name


def test_the_collection_root_is_the_deepest_root_that_holds_the_file(tmp_path: Path) -> None:
    file = tmp_path / "a" / "b" / "c.yaml"
    assert collection_root(file, [tmp_path, tmp_path / "a"]) == tmp_path / "a"
    assert collection_root(file, [tmp_path / "x"]) is None
    assert collection_root(file, [file]) == file


@pytest.mark.e2e
@pytest.mark.parametrize("folder", ["coverage", "docs", "schema"])
def test_a_checkout_under_a_skipped_folder_name_still_has_every_rule(tmp_path: Path, folder: str) -> None:
    copy = tmp_path / folder / "checkout" / "specs"
    shutil.copytree(SPECS, copy)
    assert _catalog(copy) == _catalog(SPECS)
    assert all(_catalog(SPECS).values())
    # and the folders inside the specs root are still skipped
    assert not [f for p in PROFILES for f in rule_files(copy / p) if "coverage" in f.relative_to(copy).parts]
    everything = rule_files(copy)  # the whole specs root: its ledgers and schemas are no rules
    assert everything and not [f for f in everything if f.relative_to(copy).parts[0] in SKIP_DIRS]


def test_run_variants_are_the_selected_rules_with_each_variant_in_file_order(tmp_path: Path) -> None:
    checkout = tmp_path / "coverage" / "checkout"
    checkout.mkdir(parents=True)
    path = checkout / "rules.yaml"
    path.write_text(RULES, encoding="utf-8")
    pairs = list(run_variants([str(checkout)], "ezat", ["ezat/test/t*"]))
    assert [(r.id, v) for r, v in pairs] == [
        ("ezat/test/text", {"stream": False}),
        ("ezat/test/text", {"stream": True}),
    ]
    assert [r.id for r, _ in run_variants([f"{path}::ezat/test/text"], "ezat", [])] == [
        r.id for r in load_rule_file(path).rules for _ in r.variant_combos()
    ]
    assert list(run_variants([str(checkout)], "lyrouter", [])) == []
    assert (
        list(run_variants([str(tmp_path)], "ezat", [])) == []
    )  # from tmp_path, coverage/ is a ledger folder


def test_rule_globs_match_the_id_or_an_alias() -> None:
    rule = Rule(
        id="ezat/x/y",
        level="MUST",
        title="t",
        source=Source("d", "s", "q"),
        request={},
        expect={},
        needs=Needs(True, frozenset(), frozenset(), frozenset()),
        aliases=("ezat/old/y",),
    )
    assert rule_selected(rule, [])
    assert rule_selected(rule, ["ezat/x/*"])
    assert rule_selected(rule, ["nope", "ezat/old/y"])
    assert not rule_selected(rule, ["ezat/streaming/*"])


def _collect(pytester: pytest.Pytester, gateway: str, replay_url: str, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")
    return pytester.runpytest(
        "-p", "no:cacheprovider", "--gateway-url", f"{gateway}/v1", "--gateway-key", KEY, "--profile", "ezat",
        "--replay-url", replay_url, "--collect-only", "-q", *args,
    )  # fmt: skip


@pytest.mark.e2e
@pytest.mark.parametrize("folder", ["coverage", "docs"])
def test_the_plugin_collects_every_rule_of_a_checkout_under_such_a_folder(
    pytester: pytest.Pytester, replay: ReplayServer, folder: str
) -> None:
    rules = pytester.path / folder / "checkout" / "rules.yaml"
    rules.parent.mkdir(parents=True)
    rules.write_text(RULES, encoding="utf-8")
    with serve(make_gateway(replay.url)) as gateway:
        result = _collect(pytester, gateway, replay.url, str(rules.parent))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    collected = [line for line in result.stdout.lines if "::" in line]
    assert len(collected) == 5, result.stdout.str()  # text x2 variants, refuse-n, overloaded, needs-slow


@pytest.mark.e2e
def test_the_plugin_collects_the_whole_catalog_of_specs_under_a_coverage_folder(
    pytester: pytest.Pytester, replay: ReplayServer
) -> None:
    copy = pytester.path / "coverage" / "checkout" / "specs"
    shutil.copytree(SPECS, copy)
    expected = len(list(run_variants([str(SPECS / "ezat")], "ezat", [])))
    with serve(make_gateway(replay.url)) as gateway:
        result = _collect(pytester, gateway, replay.url, "--specs-dir", str(copy))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert expected > 100
    assert len([line for line in result.stdout.lines if "::" in line]) == expected
