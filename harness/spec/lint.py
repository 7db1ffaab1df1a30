"""`gateway-conformance lint-specs [--specs-dir DIR]`: a specs dir checked as the suite would use it.

Per profile: profile.yaml and every rule file against their schemas, rule ids (prefix, unique across files),
the roles and features the rules use declared in the profile, every rule's quote present in the doc; the
ledger (coverage/<profile>.yaml) against its schema, its quotes present in the doc, its rule ids existing,
every rule listed, and no sentence left to map (TODO).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import SpecError
from harness.spec.loader import _validator, available_profiles, load_profile, load_rule_file
from harness.spec.model import Rule
from harness.spec.selection import rule_files


@dataclass(frozen=True)
class Problem:
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def doc_dirs(specs_dir: Path, extra: Sequence[Path] = ()) -> list[Path]:
    """Where a profile's doc (<doc>.md) may be: given dirs, <specs-dir>/docs (new-profile's), the docs next to
    it; lint_profile looks in the profile's own folder last (where the bundled profiles ship theirs)."""
    return [*extra, specs_dir / "docs", specs_dir.parent / "docs"]


def _find_doc(name: str, dirs: Sequence[Path]) -> Path | None:
    return next((d / f"{name}.md" for d in dirs if (d / f"{name}.md").is_file()), None)


# Contracts several profiles' rules share (specs/features/gateway-features.md: what a gateway adds, on any surface).
SHARED_DOCS = "features"


def _shared_docs(specs_dir: Path, docs: Sequence[Path]) -> dict[str, str | None]:
    """The shared contracts' normalised texts by name (specs/<SHARED_DOCS>/<doc>.md, or a --docs-dir)."""
    found: dict[str, str | None] = {}
    for folder in (*docs, specs_dir / SHARED_DOCS):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            found.setdefault(path.stem, _norm(path.read_text(encoding="utf-8")))
    return found


def lint_profile(specs_dir: Path, name: str, docs: Sequence[Path]) -> Iterator[Problem]:
    try:
        profile = load_profile(name, specs_dir)
    except SpecError as exc:
        yield Problem(exc.file, f"line {exc.line}: {exc.problem}")
        return
    profile_file = str(specs_dir / name / "profile.yaml")
    # A profile ships its own doc beside its rules (specs/<profile>/<doc>.md); --docs-dir comes first.
    doc_path = _find_doc(profile.doc, [*docs, specs_dir / name])
    doc = _norm(doc_path.read_text(encoding="utf-8")) if doc_path else None
    if doc_path is None:
        yield Problem(profile_file, f"doc {profile.doc}.md not found (looked in {', '.join(map(str, docs))})")
    texts: dict[str, str | None] = {**_shared_docs(specs_dir, docs), profile.doc: doc}
    rules: dict[str, Rule] = {}
    for path in rule_files(specs_dir / name):
        try:
            loaded = load_rule_file(path)
        except SpecError as exc:
            yield Problem(exc.file, f"line {exc.line}: {exc.problem}")
            continue
        for rule in loaded.rules:
            where = f"{rule.file}:{rule.line}"
            if not rule.id.startswith(f"{name}/"):
                yield Problem(where, f"rule id {rule.id!r} must start with {name + '/'!r}")
            if rule.id in rules:
                yield Problem(
                    where, f"rule id {rule.id!r} also at {rules[rule.id].file}:{rules[rule.id].line}"
                )
            rules[rule.id] = rule
            for role in sorted(rule.needs.models - set(profile.models)):
                yield Problem(where, f"{rule.id}: model role ${role} is not declared in {profile_file}")
            for feature in sorted((rule.needs.features | rule.needs.without) - set(profile.features)):
                yield Problem(where, f"{rule.id}: feature {feature!r} is not declared in {profile_file}")
            cited = texts.get(rule.source.doc, "") if rule.source.doc in texts else None
            if rule.source.doc not in texts:
                yield Problem(
                    where,
                    f"{rule.id}: cites doc {rule.source.doc!r}, neither the profile's ({profile.doc!r}) nor a shared "
                    f"one ({SHARED_DOCS}/<doc>.md)",
                )
            elif cited is not None and _norm(rule.source.quote) not in cited:
                yield Problem(
                    where, f"{rule.id}: the quote is not in {rule.source.doc}.md: {rule.source.quote[:80]!r}"
                )
    if not rules:
        yield Problem(str(specs_dir / name), "no rules: a profile needs at least one rule file")
    yield from _lint_ledger(specs_dir / "coverage" / f"{name}.yaml", name, profile.doc, rules, texts)


def _lint_ledger(
    path: Path, name: str, doc_name: str, rules: dict[str, Rule], texts: dict[str, str | None]
) -> Iterator[Problem]:
    file = str(path)
    if not path.is_file():
        yield Problem(file, "no ledger: every sentence of the doc must be mapped to rules or excluded")
        return
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        yield Problem(file, f"cannot read it: {str(exc).splitlines()[0]}")
        return
    errors = list(_validator("coverage").iter_errors(data))
    if errors:
        for err in errors[:5]:
            where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
            yield Problem(file, f"at {where}: {err.message}")
        return
    if data["profile"] != name or data["doc"] != doc_name:
        yield Problem(file, f"written for profile {data['profile']!r} / doc {data['doc']!r}")
    listed: set[str] = set()
    todo = 0
    for index, sentence in enumerate(data["sentences"]):
        # A sentence of a shared contract says its doc (`doc: gateway-features`); the rest are the profile's.
        cited = sentence.get("doc", doc_name)
        doc = texts.get(cited)
        if cited not in texts:
            yield Problem(
                file, f"sentences/{index}: no doc {cited}.md (the profile's, or {SHARED_DOCS}/{cited}.md)"
            )
        elif doc is not None and _norm(sentence["quote"]) not in doc:
            yield Problem(
                file, f"sentences/{index}: the quote is not in {cited}.md: {sentence['quote'][:80]!r}"
            )
        for rule_id in sentence.get("rules", ()):
            listed.add(rule_id)
            if rule_id not in rules:
                yield Problem(file, f"sentences/{index}: no rule {rule_id!r}")
        if str(sentence.get("excluded", "")).startswith("TODO"):
            todo += 1
    for rule_id in sorted(set(rules) - listed):
        yield Problem(file, f"rule {rule_id} is in no sentence's rules: which sentence does it test?")
    if todo:
        yield Problem(
            file, f"{todo} sentence(s) still to map (excluded: TODO …): map each to rules or say why not"
        )


def lint(specs_dir: Path, profiles: Sequence[str] = (), docs: Sequence[Path] = ()) -> list[Problem]:
    names = list(profiles) or available_profiles(specs_dir)
    problems: list[Problem] = []
    for name in names:
        problems += lint_profile(specs_dir, name, doc_dirs(specs_dir, docs))
    return problems
