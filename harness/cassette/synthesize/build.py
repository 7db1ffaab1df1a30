"""Every synthesized cassette built and written through the cassette module (harness/cassette/document.py), or
compared with what is on disk: `python -m harness.cassette.synthesize [--check] [--cassettes-dir DIR]`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness import paths
from harness.cassette.document import cassette_from_dict, cassette_text, cassette_to_dict
from harness.cassette.synthesize import (
    anthropic_catalogue,
    clients,
    codex,
    features,
    gemini,
    lyrouter,
    mixed,
    openai,
    responses,
)
from harness.cassette.synthesize.common import Synthesized
from harness.cassette.synthesize.scenarios import SCENARIOS

GENERATORS = (anthropic_catalogue, openai, responses, lyrouter, gemini, mixed, clients, features, codex)


def synthesized() -> list[Synthesized]:
    return [c for generator in GENERATORS for c in generator.cassettes()]


def texts(folder: Path) -> Iterator[tuple[Path, str]]:
    """Each cassette's path under `folder` and its text, validated as `load_cassette` would read it."""
    for c in synthesized():
        data: dict[str, Any] = {"metadata": c.metadata, "interactions": c.interactions}
        if c.name in SCENARIOS:
            data["scenario"] = SCENARIOS[c.name]
        data["version"] = 1
        path = folder / f"{c.name}.yaml"
        # Validated as a loader reads it, then written in the cassette module's own dict form and layout.
        cassette = cassette_from_dict(data, path=path, name=c.name)
        yield path, cassette_text(cassette_to_dict(cassette))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cassette.synthesize", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare with the files; write nothing")
    parser.add_argument("--cassettes-dir", type=Path, default=None, help="default: the suite's cassettes/")
    args = parser.parse_args(argv)
    folder = args.cassettes_dir or paths.cassettes_dir()
    stale = []
    for path, text in texts(folder):
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(path.relative_to(folder)))
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    known = {f"{c.name}.yaml" for c in synthesized()}
    for path in sorted(folder.rglob("*.yaml")):
        rel = str(path.relative_to(folder))
        if rel not in known and "origin: synthesized" in path.read_text(encoding="utf-8")[:200]:
            print(f"{rel}: synthesized, but no generator makes it", file=sys.stderr)
            stale.append(rel)
    if args.check and stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"{'checked' if args.check else 'wrote'} {len(known)} cassettes ({len(stale)} changed)")
    return 0
