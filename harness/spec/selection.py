"""Which rules a run selects, the one owner of it: what a rule file is, which folders hold none, `--rule`
globs, the rule variants a run collects, and — known before any rule runs — that the selection is not empty
(a typo in a CI job's `--rule` must not pass as a green run of nothing).

The plugin's collector, its live cost guard, certify, matrix and mutants all read these. Folders are skipped
by their place relative to the specs root (or the folder a run was given), never by the absolute path's
parts: a checkout under a folder named `coverage` or `docs` still has every rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from harness.errors import EmptySelection, SpecError
from harness.spec.loader import load_rule_file
from harness.spec.model import Rule

RULE_SUFFIXES = (".yaml", ".yml")
NON_RULE_FILES = frozenset({"profile.yaml"})
# Folders of a specs dir that hold no rule files: JSON Schemas, the coverage ledgers, documentation.
SKIP_DIRS = frozenset({"schema", "coverage", "docs"})


def is_rule_file(path: Path, root: Path | None = None) -> bool:
    """A YAML file that is not a profile, in no skipped folder below `root` (the specs root or the folder the
    run was given; a file outside `root`, or with no root, is judged by its name alone)."""
    if path.suffix not in RULE_SUFFIXES or path.name in NON_RULE_FILES:
        return False
    if root is None:
        return True
    try:
        folders = path.relative_to(root).parent.parts
    except ValueError:
        return True
    return not SKIP_DIRS & set(folders)


def collection_root(path: Path, roots: Iterable[Path]) -> Path | None:
    """The deepest of `roots` that holds `path` (what its folders are read relative to), or None."""
    holding = [r for r in roots if path == r or r in path.parents]
    return max(holding, key=lambda r: len(r.parts)) if holding else None


def rule_files(path: Path) -> list[Path]:
    """The rule files of a file or folder (a folder recursively, sorted; its skipped folders left out)."""
    if path.is_file():
        return [path] if is_rule_file(path) else []
    if not path.is_dir():
        return []
    found = sorted(f for suffix in RULE_SUFFIXES for f in path.rglob("*" + suffix))
    return [f for f in found if f.is_file() and is_rule_file(f, path)]


def rule_paths(paths: Iterable[Path]) -> list[Path]:
    """The rule files under these files or folders, as the plugin collects them."""
    return [file for path in paths for file in rule_files(path)]


def matches(rule: Rule, pattern: str) -> bool:
    """A `--rule` glob matches the rule id or any alias."""
    return any(fnmatchcase(name, pattern) for name in (rule.id, *rule.aliases))


def rule_selected(rule: Rule, patterns: Sequence[str]) -> bool:
    """`--rule` globs match the rule id or any alias; no patterns selects everything."""
    return not patterns or any(matches(rule, pattern) for pattern in patterns)


def selected(rules: Iterable[Rule], profile: str, patterns: Sequence[str]) -> Iterator[Rule]:
    """The rules of `profile` the patterns select, in order."""
    return (rule for rule in rules if rule.profile == profile and rule_selected(rule, patterns))


def variants(rules: Iterable[Rule]) -> Iterator[tuple[Rule, dict[str, Any]]]:
    """Each rule with each of its variants (one empty variant for a rule without any), in order."""
    for rule in rules:
        for variant in rule.variant_combos():
            yield rule, variant


def run_variants(
    args: Sequence[str], profile: str, patterns: Sequence[str]
) -> Iterator[tuple[Rule, dict[str, Any]]]:
    """The rule variants a run over these paths (or node ids) will collect, in collection order; a file that
    does not load is passed over (collection reports it)."""
    for arg in args:
        for file in rule_files(Path(arg.split("::")[0])):
            try:
                rules = load_rule_file(file).rules
            except SpecError:
                continue
            yield from variants(selected(rules, profile, patterns))


def profile_rules(paths: Iterable[Path], profile: str) -> list[Rule] | None:
    """The rules of `profile` under these paths; None when a file does not load (collection reports it)."""
    rules: list[Rule] = []
    for file in rule_paths(paths):
        try:
            rules += [r for r in load_rule_file(file).rules if r.profile == profile]
        except SpecError:
            return None
    return rules


def check_selection(rules: Sequence[Rule], patterns: Sequence[str], profile: str) -> None:
    """Raise EmptySelection when the patterns (or the catalog itself) select no rule of `profile`."""
    if not rules:
        raise EmptySelection(f"profile {profile} has no rules to run")
    if patterns and not any(matches(r, p) for r in rules for p in patterns):
        raise EmptySelection(
            f"--rule {' '.join(patterns)}: no rule of profile {profile} matches; nothing would be judged "
            f"(rule ids look like {rules[0].id})"
        )


def select_profiles(catalogs: Mapping[str, Sequence[Rule]], patterns: Sequence[str]) -> list[str]:
    """The profiles in which the patterns select something; every pattern must match somewhere."""
    if not patterns:
        empty = [name for name, rules in catalogs.items() if not rules]
        if empty and len(empty) == len(catalogs):
            raise EmptySelection(f"profile(s) {', '.join(empty)} have no rules to run")
        return [name for name, rules in catalogs.items() if rules]
    unmatched = [p for p in patterns if not any(matches(r, p) for rs in catalogs.values() for r in rs)]
    if unmatched:
        raise EmptySelection(
            f"--rule {' '.join(unmatched)}: no rule of profile(s) {', '.join(catalogs)} matches "
            f"{'it' if len(unmatched) == 1 else 'them'}; nothing would be judged"
        )
    return [name for name, rules in catalogs.items() if any(matches(r, p) for r in rules for p in patterns)]
