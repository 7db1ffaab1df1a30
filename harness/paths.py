"""Where the language-neutral data lives: next to the package in a checkout, inside it in a wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    installed = _PKG / "_data" / name
    if installed.is_dir():
        return installed
    return _PKG.parent / name


def specs_dir() -> Path:
    return _data_dir("specs")


def cassettes_dir() -> Path:
    return _data_dir("cassettes")


def schema_path(name: str) -> Path:
    """A schema under specs/schema: `rule`, `profile`, `report`, or a wire schema such as `openai.chat.completion`."""
    base = specs_dir() / "schema"
    for candidate in (base / f"{name}.schema.json", base / "wire" / f"{name}.schema.json"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no schema named {name!r} under {base}")


def specs_root(given: str | Path | None = None) -> Path:
    """The specs dir a run reads: `--specs-dir DIR` when given, else the bundled specs/."""
    return Path(given).resolve() if given else specs_dir()


def cache_dir(name: str) -> Path:
    """This user's cache for `name` (`$GC_CACHE_DIR/name`, default ~/.cache/gateway-conformance/name): things
    that are slow to make and safe to remake, never an input to a verdict."""
    given = os.environ.get("GC_CACHE_DIR")
    return (Path(given) if given else Path.home() / ".cache" / "gateway-conformance") / name
