"""A report folder holds one run, never two: a run's folder is new, or the previous report in it is replaced.

`--report-dir gc-report` twice (a CI job run again in one workspace) used to leave the first run's profile folders
beside the second's, and a `gc-report/*/junit.xml` glob then uploaded both. Each report folder is marked
(`.gateway-conformance`); a folder that holds a previous report is moved aside while the new run starts, put back
if the run stops on a configuration error (exit 3, no report written), and removed once the new run wrote
anything. A folder that holds anything else is refused: a report folder never deletes a user's files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import ConfigError

MARK = ".gateway-conformance"
# What a report folder written before the mark existed holds at its top (certify's, clients'): recognised as one.
_REPORT_FILES = frozenset(
    {
        "summary.md",
        "certificate.html",
        "badge.svg",
        "conformance-report.yaml",
        "baseline.md",
        "baseline.json",
        "bugs.md",
    }
)
_RUN_FILES = frozenset({"results.json", "junit.xml", "gateway.log", "robustness.json", "output.txt"})


def is_report(folder: Path) -> bool:
    """A folder a run of this suite wrote: marked, or (an older one) report files at its top and run folders."""
    if (folder / MARK).is_file():
        return True
    entries = list(folder.iterdir())
    if not any(e.name in _REPORT_FILES for e in entries):
        return False
    for entry in entries:
        if entry.is_file() and entry.name not in _REPORT_FILES:
            return False
        if (
            entry.is_dir()
            and entry.name not in ("clients", "latest")
            and not any((entry / f).exists() for f in _RUN_FILES)
        ):
            return False
    return True


def _new_stamped(root: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    path, n = root / stamp, 1
    while path.exists():  # two runs started in one second: each its own folder
        n += 1
        path = root / f"{stamp}-{n}"
    return path


@contextlib.contextmanager
def fresh_report_dir(given: str | Path | None, default_root: str) -> Iterator[Path]:
    """The folder this run writes its report to: `given` (emptied of a previous report), or `default_root/<UTC
    time>`. ConfigError (exit 3) for a path that is a file or a folder of other things."""
    path = Path(given).resolve() if given else _new_stamped(Path(default_root).resolve())
    if path.exists() and not path.is_dir():
        raise ConfigError(f"--report-dir {given}: a file, not a folder")
    aside: Path | None = None
    existed = path.is_dir()
    if existed and any(path.iterdir()):
        if not is_report(path):
            raise ConfigError(
                f"--report-dir {given}: the folder holds files that are not a gateway-conformance report; give a "
                "new or empty folder (a report folder holds one run, and never deletes other files)"
            )
        aside = path.with_name(f".{path.name}.previous-{os.getpid()}")
        shutil.rmtree(aside, ignore_errors=True)
        path.rename(aside)
        print(f"report folder {path}: the previous run's report is replaced by this run's", flush=True)
    path.mkdir(parents=True, exist_ok=True)
    (path / MARK).write_text(
        "A gateway-conformance report folder: one run's report; the next run into it replaces it.\n",
        encoding="utf-8",
    )
    try:
        yield path
    except ConfigError:  # nothing was judged and no report is written: the previous report stays
        shutil.rmtree(path, ignore_errors=True)
        if existed and aside is None:
            path.mkdir()  # it was there, empty
        if aside is not None:
            aside.rename(path)
            aside = None
        raise
    finally:
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
