"""A catalog that does not load is bad configuration, found before anything runs.

Every command that judges a catalog (the pytest plugin, certify, matrix, mutants, fuzz) checks it here first: a
rule file that breaks the schema (`level: MUSTT`, a misspelt key such as `upstream_call:`) must stop the run
with exit 3 and every problem of every file named — never a green run of the files that did load, nor a
certificate of nothing. `catalog_problems` is pure apart from reading the files.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from harness.errors import RuleCatalogError


@dataclass(frozen=True)
class CatalogProblem:
    """One reason a rule file cannot be used."""

    file: str
    line: int
    message: str
    rule_id: str | None = None
    key: str | None = None  # the offending key (a misspelt one, or the one whose value is wrong)
    suggestion: str | None = None  # "did you mean …": the closest allowed key or value

    def text(self) -> str:
        where = f"{self.file}:{self.line}"
        what = f"rule {self.rule_id}: " if self.rule_id else ""
        if self.key:
            what += f"key {self.key!r}: "
        hint = f" (did you mean {self.suggestion!r}?)" if self.suggestion else ""
        return f"{where}: {what}{self.message}{hint}"


def _leaves(error: jsonschema.ValidationError) -> Iterator[jsonschema.ValidationError]:
    """The specific errors under a oneOf/anyOf failure (its best match, recursively), else the error."""
    if error.context:
        best = jsonschema.exceptions.best_match(error.context)
        if best is not None:
            yield from _leaves(best)
            return
    yield error


def _close(word: str, choices: Iterable[Any]) -> str | None:
    names = [str(c) for c in choices]
    found = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return found[0] if found else None


def _rule_id(data: Any, path: list[Any]) -> str | None:
    if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int) and isinstance(data, Mapping):
        rules = data.get("rules")
        if isinstance(rules, list) and path[1] < len(rules) and isinstance(rules[path[1]], Mapping):
            rule_id = rules[path[1]].get("id")
            return str(rule_id) if rule_id is not None else f"#{path[1] + 1}"
    return None


def _schema_problems(name: str, data: Any, node: Any) -> list[CatalogProblem]:
    from harness.spec.loader import _line_of, _validator

    out: list[CatalogProblem] = []
    seen: set[tuple[str, str]] = set()
    for top in _validator("rule").iter_errors(data):
        for err in _leaves(top):
            path = list(err.absolute_path)
            rule_id = _rule_id(data, path)
            if err.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(
                err.instance, Mapping
            ):
                allowed = (err.schema.get("properties") or {}) if isinstance(err.schema, Mapping) else {}
                extra = [k for k in err.instance if f"'{k}'" in err.message]
                for key in extra or ["?"]:
                    if (str(path), key) in seen:
                        continue
                    seen.add((str(path), key))
                    out.append(
                        CatalogProblem(
                            name,
                            _line_of(node, [*path, key]),
                            "unknown key",
                            rule_id,
                            key,
                            _close(key, allowed),
                        )
                    )
                continue
            if (str(path), err.message) in seen:
                continue
            seen.add((str(path), err.message))
            key = str(path[-1]) if path and isinstance(path[-1], str) else None
            suggestion = None
            if err.validator == "enum" and isinstance(err.instance, str):
                suggestion = _close(err.instance, err.validator_value)
            elif err.validator == "const" and isinstance(err.instance, str):
                suggestion = _close(err.instance, [err.validator_value])
            where = "/".join(str(p) for p in path) or "(top level)"
            out.append(
                CatalogProblem(
                    name, _line_of(node, path), f"at {where}: {err.message}", rule_id, key, suggestion
                )
            )
    return out


def file_problems(path: Path) -> list[CatalogProblem]:
    """Every schema problem of one rule file; when the schema holds, the loader's first semantic problem."""
    from harness.errors import SpecError
    from harness.spec import load_rule_file
    from harness.spec.loader import _parse

    name = str(path)
    try:  # the common case: the file loads (one parse); only a broken file is analysed in full
        load_rule_file(path)
        return []
    except SpecError as first:
        loaded_problem = CatalogProblem(name, first.line, first.problem)
    try:
        data, node = _parse(path)
    except SpecError as exc:
        return [CatalogProblem(name, exc.line, exc.problem)]
    if data is None:
        return [CatalogProblem(name, 1, "empty rule file")]
    return _schema_problems(name, data, node) or [loaded_problem]


def catalog_problems(paths: Iterable[Path]) -> list[CatalogProblem]:
    """The problems of every rule file under these files or folders, as the plugin would collect them."""
    from harness.spec.selection import rule_paths

    return [p for file in rule_paths(paths) for p in file_problems(file)]


def check_catalog(paths: Iterable[Path]) -> None:
    """Raise RuleCatalogError (a ConfigError: exit 3) naming every problem, when any rule file does not load."""
    problems = catalog_problems(paths)
    if problems:
        raise RuleCatalogError(problems)


__all__ = ["CatalogProblem", "catalog_problems", "check_catalog", "file_problems"]
