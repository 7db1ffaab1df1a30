"""Which rules a run selects, known before any rule runs: an empty selection is bad configuration, never a
green run of nothing (a typo in a CI job's `--rule` must not pass)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from harness.errors import ConfigError
from harness.spec import Rule, SpecError, load_rule_file
from harness.spec.loader import NON_RULE_FILES

# Folders under a specs dir that hold no rule files (the plugin skips them too).
SKIP_DIRS = frozenset({"schema", "coverage", "docs"})


class EmptySelection(ConfigError):
    """The run would judge no rule at all."""


def rule_paths(paths: Iterable[Path]) -> list[Path]:
    """The rule files under these files or folders, as the plugin collects them."""
    out: list[Path] = []
    for path in paths:
        candidates = [path] if path.is_file() else sorted(path.rglob("*.y*ml")) if path.is_dir() else []
        for file in candidates:
            if file.suffix not in (".yaml", ".yml") or file.name in NON_RULE_FILES:
                continue
            if SKIP_DIRS & set(file.relative_to(path).parts if path.is_dir() else ()):
                continue
            out.append(file)
    return out


def profile_rules(paths: Iterable[Path], profile: str) -> list[Rule] | None:
    """The rules of `profile` under these paths; None when a file does not load (collection reports it)."""
    rules: list[Rule] = []
    for file in rule_paths(paths):
        try:
            rules += [r for r in load_rule_file(file).rules if r.profile == profile]
        except SpecError:
            return None
    return rules


def matches(rule: Rule, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    return any(fnmatchcase(name, pattern) for name in (rule.id, *rule.aliases))


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
