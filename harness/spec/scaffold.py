"""`gateway-conformance new-profile NAME --doc FILE`: a profile for your own gateway's docs, to be edited.

Writes, under a specs dir:
    <dir>/<NAME>/profile.yaml        one model role ($MODEL), no features, the doc's title
    <dir>/<NAME>/response.yaml       a first rule, citing the doc's first sentence verbatim
    <dir>/coverage/<NAME>.yaml       the ledger: every sentence of the doc, each still to map (TODO)
    <dir>/docs/<doc>.md              a copy of the doc (lint-specs checks quotes against it)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import ConfigError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# A sentence ends at . ! ? (optionally closed by a quote, bracket or backtick) before a space and a new start.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]`]*\s+(?=[A-Z`\"'(\[*_0-9])")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
TODO_EXCLUDED = "TODO: map this sentence (rules: [ids]) or say why no rule tests it (excluded: reason)"


@dataclass(frozen=True)
class Sentence:
    section: str
    quote: str


def doc_name(path: Path) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", path.stem.lower()).strip("-")
    return name or "doc"


def sentences(markdown: str) -> Iterator[Sentence]:
    """Every sentence of a Markdown doc under its heading; each table row is one. Code blocks are skipped."""
    section = "(top)"
    paragraph: list[str] = []
    fenced = False

    def flush() -> Iterator[Sentence]:
        text = " ".join(paragraph).strip()
        paragraph.clear()
        for part in _SENTENCE_END.split(text):
            part = part.strip()
            if len(part) >= 3:
                yield Sentence(section, part)

    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            yield from flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if stripped.startswith("#"):
            yield from flush()
            section = stripped.lstrip("#").strip() or section
        elif stripped.startswith("|"):
            yield from flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue  # the header separator
            row = stripped.strip("|").strip()
            if len(row) >= 3:
                yield Sentence(section, row)
        elif not stripped:
            yield from flush()
        else:
            item = _LIST_MARK.match(line)
            if item:
                yield from flush()
                stripped = line[item.end() :].strip()
            if stripped.startswith(">"):
                stripped = stripped.lstrip("> ").strip()
            paragraph.append(stripped)
    yield from flush()


def _title(markdown: str, name: str) -> str:
    for line in markdown.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return name


def _dump(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


_ENDPOINT_RE = re.compile(r"(?:https?://[^\s/`\"')]+)?((?:/[\w.~-]+)*)/chat/completions\b")
_MODEL_RE = re.compile(r'"model"\s*:\s*"([^"\s]+)"')
# A model id a doc writes as a placeholder for the reader's own (`MODEL_ID`, `<model>`), not a real id.
_PLACEHOLDER_RE = re.compile(r"^(?:[A-Z_]+|<.*>|\{.*\}|your[-_].*)$")


def doc_base_path(markdown: str) -> str | None:
    """The base path a doc's examples use for the chat endpoint (`/openai/v1` from
    `https://api.example/openai/v1/chat/completions`): the most frequent one, None when the doc shows none."""
    found = [m.group(1) or "/" for m in _ENDPOINT_RE.finditer(markdown)]
    if not found:
        return None
    return max(dict.fromkeys(found), key=found.count)


def doc_models(markdown: str) -> list[str]:
    """The model ids a doc's examples send, most frequent first (placeholders such as MODEL_ID left out)."""
    found = [m for m in _MODEL_RE.findall(markdown) if not _PLACEHOLDER_RE.match(m)]
    return sorted(dict.fromkeys(found), key=lambda m: -found.count(m))


def scaffold(name: str, doc: Path, specs_dir: Path) -> list[Path]:
    """Write a new profile's files under `specs_dir`; return them. Refuses to overwrite a profile."""
    if not NAME_RE.match(name):
        raise ConfigError(f"profile name {name!r}: use lowercase letters, digits and dashes")
    try:
        markdown = doc.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--doc {doc}: cannot read it: {exc}") from exc
    found = list(sentences(markdown))
    if not found:
        raise ConfigError(f"--doc {doc}: no sentence found (expected a Markdown document)")
    profile_dir = specs_dir / name
    if profile_dir.exists():
        raise ConfigError(f"{profile_dir} already exists: choose another NAME or --specs-dir")
    doc_id = doc_name(doc)
    # The first real sentence (five words or more, ending like one) is the one the first rule cites.
    first = next((s for s in found if len(s.quote.split()) >= 5 and s.quote[-1] in ".!?"), found[0])
    rule_id = f"{name}/response/plain-text-answer"
    profile = {
        "profile": name,
        "doc": doc_id,
        "title": _title(markdown, name),
        # Read from the doc it scaffolds: the base path and a model id its own examples use.
        "base_path": doc_base_path(markdown) or "/v1",
        "models": {
            "MODEL": {
                "default": (doc_models(markdown) or ["your-chat-model"])[0],
                "description": "A chat model the gateway serves (map it to your id with --model-map).",
            }
        },
        "features": {},
    }
    rules = {
        "source": {"doc": doc_id, "section": first.section},
        "rules": [
            {
                "id": rule_id,
                "level": "SHOULD",
                "title": "A plain text request is answered with a valid chat completion",
                "source": {"quote": first.quote},
                "reading": "A first rule scaffolded by new-profile: the doc's opening sentence read as a promise "
                "that an OpenAI Chat Completions request is answered 200 with a chat.completion object. "
                "Replace the quote with the sentence a rule tests and keep each rule as strict as its sentence.",
                "request": {
                    "body": {"model": "$MODEL", "messages": [{"role": "user", "content": "Say hello."}]}
                },
                "upstream": {"cassette": "anthropic/text-basic"},
                "expect": {"status": 200, "schema": True},
            }
        ],
    }
    ledger = {
        "profile": name,
        "doc": doc_id,
        "sentences": [
            {
                "section": s.section,
                "quote": s.quote,
                **({"rules": [rule_id]} if s == first else {"excluded": TODO_EXCLUDED}),
            }
            for s in found
        ],
    }
    files = {
        profile_dir / "profile.yaml": _dump(profile),
        profile_dir / "response.yaml": _dump(rules),
        specs_dir
        / "coverage"
        / f"{name}.yaml": "# Every sentence of the doc: map each to rule ids, or exclude "
        "it with a reason.\n" + _dump(ledger),
        specs_dir / "docs" / f"{doc_id}.md": markdown,
    }
    for path in files:
        if path.exists() and path.parent != profile_dir:
            raise ConfigError(f"{path} already exists")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)
