"""`gateway-conformance drift`: a new version of a gateway's doc against its rules and coverage ledger.

Lists the rules whose quoted sentence changed or vanished, the ledger sentences that are gone, and the
normative sentences of the doc (numbers, codes, exact strings, must/never/only, ...) that no rule or ledger
entry covers. Exit 0 when the doc and the catalog agree, 1 when anything drifted, 3 on bad configuration.
This is also how a user checks a ledger against a doc kept outside the checkout.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import ConfigError, SpecError
from harness.paths import specs_dir
from harness.spec import load_profile, load_rule_file
from harness.spec.selection import rule_files

EXIT_OK, EXIT_DRIFT, EXIT_CONFIG = 0, 1, 3

# What makes a sentence normative: a number, an inline code span or quoted string, or a word that binds.
_NORMATIVE = re.compile(
    r"\d|`[^`]+`|\"[^\"]+\"|\b(must|never|only|always|not|no|cannot|can't|isn't|aren't|don't|doesn't|"
    r"required|requires|refused|rejected|removed|dropped|ignored|forwarded|unchanged|exactly|at most|"
    r"at least|up to|default|defaults|becomes|instead)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"(\[])")
_CLOSE = 0.6  # difflib ratio from which a changed sentence is shown as "changed" rather than "vanished"


@dataclass(frozen=True)
class QuoteDrift:
    where: str  # a rule id, or "ledger: <section>"
    quote: str
    status: str  # "changed" (a close sentence exists) or "vanished"
    closest: str | None = None


@dataclass(frozen=True)
class Uncovered:
    section: str
    sentence: str


@dataclass
class DriftReport:
    profile: str
    doc: str
    rules: list[QuoteDrift] = field(default_factory=list)
    ledger: list[QuoteDrift] = field(default_factory=list)
    uncovered: list[Uncovered] = field(default_factory=list)

    @property
    def drifted(self) -> bool:
        return bool(self.rules or self.ledger or self.uncovered)


# --- reading the doc -------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.split())


# How an example written without a code fence starts (the relay doc writes its JSON and SSE plainly).
_EXAMPLE_STARTS = ("{", "[", "data: ", "curl ", "-H ", "-d ")


def doc_sentences(text: str) -> Iterator[tuple[str, str]]:
    """(section, sentence) for every prose sentence and table row outside fenced code blocks.

    Sections are the `##` headings (the ledger's unit; `###` stays in its `##`); the title and lead before
    the first `##` are not sentences of any section. A doc written without `##` (the relay doc: `#Heading`
    lines) has its `#` headings as sections, and a first line that is no heading is its page title, whose
    section holds the introduction. A table's header row and an example's label ("200:") are not sentences.
    """
    lines = text.splitlines()
    level_two = any(line.startswith("## ") for line in lines)
    first = next((line.strip() for line in lines if line.strip()), "")
    section: str | None = None if level_two or first.startswith("#") else first
    fenced = False
    paragraph: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        joined = _normal(" ".join(paragraph))
        paragraph.clear()
        if section is None or joined.startswith(_EXAMPLE_STARTS):
            return  # outside any section, or an unfenced example (a JSON body, SSE lines, a curl command)
        for sentence in _SENTENCE_END.split(joined):
            sentence = sentence.strip()
            if sentence and not (sentence.endswith(":") and len(sentence.split()) <= 3):
                yield section, sentence

    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("```"):
            yield from flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if stripped.startswith("#"):
            yield from flush()
            if stripped.startswith("## ") or (not level_two and stripped.lstrip("#").strip()):
                section = stripped.lstrip("#").strip()
            continue
        if section is not None and stripped == section and not paragraph:
            continue  # the page title line itself
        if stripped.startswith("|"):
            yield from flush()
            following = lines[number + 1].strip() if number + 1 < len(lines) else ""
            if section is not None and not _separator(stripped) and not _separator(following):
                yield section, stripped
            continue
        if not stripped or stripped.startswith(("- ", "* ", ">")) or re.match(r"\d+\.\s", stripped):
            yield from flush()
            if not stripped:
                continue
            stripped = re.sub(r"^([-*>]|\d+\.)\s*", "", stripped)
        paragraph.append(stripped)
    yield from flush()


def _separator(row: str) -> bool:
    """A table's `|---|:---:|` line."""
    cells = [c.strip() for c in row.strip("|").split("|")]
    return row.startswith("|") and all(c and set(c) <= set("-: ") for c in cells)


def is_normative(sentence: str) -> bool:
    return _NORMATIVE.search(sentence) is not None


def _closest(quote: str, sentences: Sequence[str]) -> tuple[float, str | None]:
    best, found = 0.0, None
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(_normal(quote))
    for sentence in sentences:
        matcher.set_seq1(sentence)
        if matcher.real_quick_ratio() < best or matcher.quick_ratio() < best:
            continue
        ratio = matcher.ratio()
        # A quote is often part of a longer sentence: judge it against the best window of the same length.
        if len(sentence) > len(quote) * 1.5:
            blocks = matcher.get_matching_blocks()
            start = max(0, blocks[0].a - blocks[0].b) if blocks else 0
            window = difflib.SequenceMatcher(None, sentence[start : start + len(quote) + 20], _normal(quote))
            ratio = max(ratio, window.ratio())
        if ratio > best:
            best, found = ratio, sentence
    return best, found


def _drift(where: str, quote: str, text: str, flat: str, sentences: Sequence[str]) -> QuoteDrift | None:
    if quote in text or _normal(quote) in flat:
        return None
    ratio, closest = _closest(quote, sentences)
    if ratio >= _CLOSE:
        return QuoteDrift(where, quote, "changed", closest)
    return QuoteDrift(where, quote, "vanished")


# --- the comparison --------------------------------------------------------------------------------


def compare(
    profile: str, doc_name: str, text: str, rules: Sequence[Any], ledger: Sequence[dict[str, Any]]
) -> DriftReport:
    """Pure: the doc's text against the rules' quotes (those citing `doc_name`) and the ledger entries."""
    report = DriftReport(profile, doc_name)
    flat = _normal(text)
    pairs = list(doc_sentences(text))
    sentences = [s for _, s in pairs]
    for rule in rules:
        if rule.source.doc != doc_name:
            continue
        found = _drift(rule.id, rule.source.quote, text, flat, sentences)
        if found:
            report.rules.append(found)
    # Sentences of a contract the profile shares with others (`doc: gateway-features`) are that doc's to drift.
    ledger = [entry for entry in ledger if entry.get("doc", doc_name) == doc_name]
    for entry in ledger:
        found = _drift(f"ledger: {entry['section']}", entry["quote"], text, flat, sentences)
        if found:
            report.ledger.append(found)
    quotes = [_normal(rule.source.quote) for rule in rules if rule.source.doc == doc_name]
    quotes += [_normal(entry["quote"]) for entry in ledger]
    spans = sorted(_spans(flat, quotes))
    for section, sentence in pairs:
        if is_normative(sentence) and not _covered(sentence, flat, spans, quotes):
            report.uncovered.append(Uncovered(section, sentence))
    return report


def _spans(flat: str, quotes: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Where in the (whitespace-normalised) doc each quote stands, every occurrence."""
    for quote in set(quotes):
        if not quote:
            continue
        start = flat.find(quote)
        while start >= 0:
            yield start, start + len(quote)
            start = flat.find(quote, start + 1)


def _covered(sentence: str, flat: str, spans: Sequence[tuple[int, int]], quotes: Sequence[str]) -> bool:
    """A quote overlaps the sentence by at least 20 characters, or by half of it (quotes may span sentences)."""
    start = flat.find(sentence)
    if start < 0:  # markup removed from the sentence (a list marker): fall back to containment
        return any(q in sentence or sentence in q for q in quotes if q)
    end = start + len(sentence)
    need = min(20, max(1, len(sentence) // 2))
    return any(min(end, b) - max(start, a) >= need for a, b in spans if a < end and b > start)


# --- the command -----------------------------------------------------------------------------------


def _load(profile: str, specs: Path) -> tuple[str, list[Any], list[dict[str, Any]]]:
    try:
        declared = load_profile(profile, specs)
    except SpecError as exc:
        raise ConfigError(str(exc)) from exc
    rules: list[Any] = []
    try:
        for path in rule_files(specs / profile):
            rules.extend(load_rule_file(path).rules)
    except SpecError as exc:
        raise ConfigError(str(exc)) from exc
    ledger_path = specs / "coverage" / f"{profile}.yaml"
    if not ledger_path.is_file():
        raise ConfigError(f"{ledger_path}: no coverage ledger for profile {profile!r}")
    try:
        data = yaml.safe_load(ledger_path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{ledger_path}: not YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sentences"), list):
        raise ConfigError(f"{ledger_path}: expected a mapping with `sentences`")
    return declared.doc, rules, data["sentences"]


def shipped_doc(profile: str, specs: Path) -> Path:
    """The doc a profile's rules quote, as shipped beside it (specs/<profile>/<doc>.md)."""
    try:
        declared = load_profile(profile, specs)
    except SpecError as exc:
        raise ConfigError(str(exc)) from exc
    return specs / profile / f"{declared.doc}.md"


def format_report(report: DriftReport) -> str:
    lines = [f"drift: profile {report.profile}, doc {report.doc}"]

    def quoted(items: list[QuoteDrift], title: str) -> None:
        lines.append(f"\n{title}: {len(items)}")
        for item in items:
            lines.append(f"  - {item.where} ({item.status}): {item.quote!r}")
            if item.closest:
                lines.append(f"      now: {item.closest!r}")

    quoted(report.rules, "rules whose quote changed or vanished")
    quoted(report.ledger, "ledger sentences that are gone")
    lines.append(f"\nnormative sentences no rule or ledger entry covers: {len(report.uncovered)}")
    for item in report.uncovered:
        lines.append(f"  - [{item.section}] {item.sentence}")
    lines.append(
        "\n" + ("verdict: the doc drifted from the catalog" if report.drifted else "verdict: no drift")
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """`drift` with the arguments harness/cli/drift.py parsed."""
    specs = args.specs or specs_dir()
    try:
        if not (specs / args.profile / "profile.yaml").is_file():
            raise ConfigError(f"no profile {args.profile!r} under {specs}")
        if args.doc is None:
            args.doc = shipped_doc(args.profile, specs)
        if not args.doc.is_file():
            raise ConfigError(f"{args.doc}: no such file")
        try:
            text = args.doc.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{args.doc}: cannot read it: {exc}") from exc
        doc_name, rules, ledger = _load(args.profile, specs)
    except ConfigError as exc:
        print(f"gateway-conformance drift: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    report = compare(args.profile, doc_name, text, rules, ledger)
    if args.json:
        print(json.dumps(asdict(report) | {"drifted": report.drifted}, indent=2, ensure_ascii=False))
    else:
        print(format_report(report))
    return EXIT_DRIFT if report.drifted else EXIT_OK
