"""A report folder holds one run, never two, and no run touches another's files.

Each run's folder is its own: a default one (`gc-report/<UTC time>`) is created exclusively (two runs started in the
same second get `…-2`), and a given `--report-dir` is taken with a lock file (`.gateway-conformance.lock`, the run's
pid) that a second run finds and is refused by while the first is alive (issue 48: the later run's certificate
replaced the earlier one's, and a run that failed at start deleted the folder the other was writing in). A lock
whose run is gone (killed) is said and taken over.

Each report folder is marked (`.gateway-conformance`); the previous report in a given folder is moved aside inside it
while the new run starts, put back if the run stops on a configuration error (exit 3, no report written) or before
writing anything, and removed once the new run wrote its report. A folder that holds anything else is refused: a
run never deletes a user's files, and removes only what it created. A destination that cannot be written (read-only,
a file where a folder is asked for) is one line and exit 3 before any work (`writable_dir`, `writable_file`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import ConfigError

MARK = ".gateway-conformance"
LOCK = ".gateway-conformance.lock"
_ASIDE = ".gateway-conformance.previous-"
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
        "upgrades.md",
        "upgrades.json",
    }
)
_RUN_FILES = frozenset({"results.json", "junit.xml", "gateway.log", "robustness.json", "output.txt"})


def is_report(folder: Path) -> bool:
    """A folder a run of this suite wrote: marked, or (an older one) report files at its top and run folders."""
    if (folder / MARK).is_file():
        return True
    entries = [e for e in folder.iterdir() if e.name != LOCK]
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


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def new_run_dir(root: Path, prefix: str = "", option: str = "--report-dir") -> Path:
    """A new folder of this run's own under `root`, `<prefix><UTC time>` (`-2`, `-3`, … when another run has it),
    created exclusively: no other run can be given the same one."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the report folder {root}: {_why(exc)} (give {option} DIR)") from exc
    stamp = prefix + datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    n = 1
    while True:
        path = root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1
        except OSError as exc:
            raise ConfigError(
                f"cannot create the report folder {path}: {_why(exc)} (give {option} DIR)"
            ) from exc


def _started(pid: int) -> str:
    """The process's start time in clock ticks (/proc), so that a reused pid is not taken for the run."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return ""


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return not started or _started(pid) in ("", started)


@contextlib.contextmanager
def _locked(path: Path, shown: str, option: str) -> Iterator[None]:
    """Hold the folder's lock file for the block: ConfigError when a live run holds it; a dead run's is taken."""
    lock = path / LOCK
    mine = f"{os.getpid()} {_started(os.getpid())}\n"
    for _attempt in range(3):
        try:
            _create(lock, mine)
        except FileExistsError:
            held = lock.read_text(encoding="utf-8", errors="replace").split() if lock.is_file() else []
            if not held:
                continue  # released meanwhile
            pid = int(held[0]) if held[0].isdigit() else 0
            if pid and _alive(pid, held[1] if len(held) > 1 else ""):
                raise ConfigError(
                    f"{option} {shown}: another gateway-conformance run (pid {pid}) is writing its report there; "
                    "give each run its own folder (or wait for it)"
                ) from None
            print(
                f"report folder {path}: a run that did not finish (pid {pid}) left it; taken over", flush=True
            )
            lock.unlink(missing_ok=True)
            continue
        except OSError as exc:
            raise ConfigError(f"{option} {shown}: cannot write there: {_why(exc)}") from exc
        break
    else:
        raise ConfigError(f"{option} {shown}: its lock file {lock} keeps coming back; give another folder")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if lock.read_text(encoding="utf-8") == mine:
                lock.unlink()


def _create(lock: Path, text: str) -> None:
    """Create `lock` holding `text` at once (FileExistsError if it is there): written aside, then hard-linked, so
    no run ever reads it empty; where the file system has no hard links, created exclusively and written."""
    aside = lock.with_name(f"{lock.name}.{os.getpid()}")
    aside.write_text(text, encoding="utf-8")
    try:
        os.link(aside, lock)
    except FileExistsError:
        raise
    except OSError:  # no hard links here
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    finally:
        aside.unlink(missing_ok=True)


def _own_entries(path: Path, aside: Path | None) -> list[Path]:
    return [e for e in path.iterdir() if e.name not in (LOCK, MARK) and e != aside]


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


@contextlib.contextmanager
def fresh_report_dir(
    given: str | Path | None, default_root: str, option: str = "--report-dir", prefix: str = ""
) -> Iterator[Path]:
    """The folder this run writes its report to: `given` (its previous report replaced), or a new
    `default_root/<prefix><UTC time>`. ConfigError (exit 3) for a path that is a file, cannot be written, holds other
    files or is another live run's."""
    shown = str(given)
    if given:
        path = Path(given).resolve()
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{option} {given}: a file, not a folder")
        created = not path.exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{option} {given}: cannot create it: {_why(exc)}") from exc
    else:
        path, created = new_run_dir(Path(default_root).resolve(), prefix, option), True
        shown = str(path)
    try:
        with _locked(path, shown, option):
            yield from _replacing(path, shown, option)
    finally:
        if created:  # a folder this run made and wrote nothing into is not left behind
            with contextlib.suppress(OSError):
                if not _own_entries(path, None):
                    (path / MARK).unlink(missing_ok=True)
                    path.rmdir()


def _replacing(path: Path, shown: str, option: str) -> Iterator[Path]:
    """Under the lock: the previous report set aside, the mark written, the block run; then the previous report
    dropped (this run wrote its own) or put back (it wrote nothing, or stopped on a configuration error)."""
    aside: Path | None = None
    previous = [e for e in path.iterdir() if e.name != LOCK]
    if previous:
        if not is_report(path):
            raise ConfigError(
                f"{option} {shown}: the folder holds files that are not a gateway-conformance report; give a "
                "new or empty folder (a report folder holds one run, and never deletes other files)"
            )
        aside = path / f"{_ASIDE}{os.getpid()}"
        _remove(aside)
        try:
            aside.mkdir()
            for entry in previous:
                entry.rename(aside / entry.name)
        except OSError as exc:
            _put_back(path, aside)
            raise ConfigError(f"{option} {shown}: cannot write there: {_why(exc)}") from exc
        print(f"report folder {path}: the previous run's report is replaced by this run's", flush=True)
    try:
        (path / MARK).write_text(
            "A gateway-conformance report folder: one run's report; the next run into it replaces it.\n",
            encoding="utf-8",
        )
        writable_dir(path, option, shown)
    except ConfigError:
        if aside is not None:
            _put_back(path, aside)
        raise
    keep_new = False
    try:
        yield path
        keep_new = bool(_own_entries(path, aside))
    except ConfigError:  # nothing was judged and no report is written: the previous report stays
        raise
    except BaseException:  # interrupted: what it wrote is the folder's now (if nothing, the previous stays)
        keep_new = bool(_own_entries(path, aside))
        raise
    finally:
        if keep_new:
            if aside is not None:
                _remove(aside)
        else:  # the folder as it was: what this run made removed, the previous report put back
            for entry in _own_entries(path, aside):
                _remove(entry)
            (path / MARK).unlink(missing_ok=True)
            if aside is not None:
                _put_back(path, aside)


def _put_back(path: Path, aside: Path) -> None:
    """The previous report, set aside in `aside`, back where it was."""
    for entry in list(aside.iterdir()):
        with contextlib.suppress(OSError):
            entry.rename(path / entry.name)
    with contextlib.suppress(OSError):
        aside.rmdir()


def writable_dir(path: Path, option: str, shown: str) -> None:
    """`path` takes files (probed with a temporary one): ConfigError naming the option when it does not."""
    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".gc-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{option} {shown}: cannot write there: {_why(exc)}") from exc


def writable_file(path: str | Path, option: str) -> None:
    """A file the run writes at its end, probed before any work (issue 48): its folder made and written to, the
    file itself not created. ConfigError naming the option for a folder given as the file, or a place that cannot
    be written."""
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"{option} {path}: a folder, not a file")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot create its folder: {_why(exc)}") from exc
    writable_dir(target.parent, option, str(path))
