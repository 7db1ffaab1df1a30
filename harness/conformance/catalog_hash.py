"""The digest a conformance report names its catalog by: every file of `specs/<profile>/` and of `cassettes/`.

The manifest is `sha256sum`'s output over those files — one line `<sha256 of the file's bytes>  <label>` per
file, sorted by label (byte order), labels `specs/<profile>/<path>` and `cassettes/<path>` with `/` — and the
digest is the sha256 of the manifest. From a checkout the same number is:

    find specs/ezat cassettes -type f ! -path '*/__pycache__/*' ! -name '*.pyc' | LC_ALL=C sort \
        | xargs sha256sum | sha256sum

It covers the rules, the profile file and anything else under the profile's folder (its doc or contract), and
every cassette (the cassettes are shared by the profiles, so all of them). It does not cover the harness's code
(the suite version names that) nor the schemas and coverage ledgers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Digest:
    sha256: str
    files: int
    manifest: str


def _files(root: Path, label: str) -> Iterator[tuple[str, Path]]:
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        # Byte-code caches appear when a cassette's generator script is run; they are not part of the suite.
        if "__pycache__" in rel.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        yield f"{label}/{rel.as_posix()}", path


def catalog_digest(specs_root: Path, profile: str, cassettes: Path) -> Digest:
    """The digest of `specs_root/<profile>/` and `cassettes/` (see the module docstring)."""
    entries = sorted(
        [*_files(specs_root / profile, f"specs/{profile}"), *_files(cassettes, "cassettes")],
        key=lambda item: item[0].encode("utf-8"),
    )
    manifest = "".join(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {label}\n" for label, path in entries
    )
    return Digest(hashlib.sha256(manifest.encode("utf-8")).hexdigest(), len(entries), manifest)
