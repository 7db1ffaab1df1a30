"""The processes a run starts, and how an interrupt ends them (issue 48).

SIGINT and SIGTERM (Ctrl-C, `timeout`, a CI cancel) are the same request here: `handle_signals()` makes the first one
raise `Interrupted(signum)` in the main thread, so a run unwinds as it does on Ctrl-C, keeps what it judged and exits
128 + the signal; a second one while it stops sends SIGKILL to what is left instead of interrupting the clean-up.

Every child a run starts is in a process group of its own (`start_new_session=True`, or `os.setsid()` in a forked
child), so a terminal's Ctrl-C reaches only the run itself, which stops its children in order: `stop_children()` sends
SIGINT to each catalog run's group (a child pytest then writes the results it judged so far) and waits a grace period,
then SIGKILL; `stop_all()` ends whatever else of this process's descendants is still alive (gateways, a fork server,
client drivers and what they started), SIGTERM, then SIGKILL. Nothing the run started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.errors import Interrupted

GRACE = 10.0  # seconds a child pytest has to write its results after SIGINT
_LOCK = threading.Lock()
_CHILDREN: set[int] = set()  # the catalog runs' process groups (each child's pid is its group's id)
_RECEIVED: list[int] = []  # the signals received by this run, in order


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def received() -> int | None:
    """The first signal that interrupted this run, or None."""
    return _RECEIVED[0] if _RECEIVED else None


def _on_signal(signum: int, _frame: Any) -> None:
    _RECEIVED.append(signum)
    if len(_RECEIVED) == 1:
        raise Interrupted(signum)
    # asked again while stopping: stop at once, without breaking the clean-up in progress
    for pgid in list(_CHILDREN):
        _signal_group(pgid, signal.SIGKILL)


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main thread for the block (nothing where this is not the main
    thread); the previous handlers come back after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    _RECEIVED.clear()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def handle_signals() -> dict[int, Any]:
    """SIGINT and SIGTERM raise Interrupted in the main thread until `restore(the handlers returned)` (the plugin,
    from configure to unconfigure); nothing where this is not the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    _RECEIVED.clear()
    return {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}


def restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


@contextlib.contextmanager
def tracked(pid: int) -> Iterator[None]:
    """A catalog run (its own process group) that `stop_children()` interrupts while the block runs."""
    if pid <= 0:  # never this process's own group, nor every process
        raise ValueError(f"not a child's pid: {pid}")
    with _LOCK:
        _CHILDREN.add(pid)
    try:
        yield
    finally:
        with _LOCK:
            _CHILDREN.discard(pid)


def _alive(pid: int) -> bool:
    """Running: there, and not a zombie waiting for its parent to read its exit."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    return state not in ("Z", "X")


def _wait_gone(pids: Callable[[], set[int]], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    left = {p for p in pids() if _alive(p)}
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = {p for p in left if _alive(p)}
    return left


def stop_children(grace: float = GRACE) -> None:
    """SIGINT to every catalog run's group (each writes the results it judged and exits); SIGKILL to a group still
    there after `grace` seconds."""
    with _LOCK:
        groups = set(_CHILDREN)
    for pgid in groups:
        _signal_group(pgid, signal.SIGINT)
    for pgid in _wait_gone(lambda: groups, grace):
        _signal_group(pgid, signal.SIGKILL)


def descendants(root: int | None = None) -> list[int]:
    """Every live process below `root` (this one), children first; empty where /proc is not there."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] not in ("Z", "X"):
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [], [root or os.getpid()]
    while queue:
        for child in parents.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def _ends_with_us(pid: int) -> bool:
    """multiprocessing's resource tracker: it ignores SIGTERM, ends when this process does (its pipe closes) and
    cleans up after the fork server then; killing it would skip that."""
    try:
        return b"multiprocessing.resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def stop_all(grace: float = 5.0) -> None:
    """End every process this one started that is still alive, whatever started it: SIGTERM, then SIGKILL after
    `grace` seconds. The last thing an interrupted command does."""
    stop_children(min(grace, GRACE))
    left = [pid for pid in descendants() if not _ends_with_us(pid)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    for pid in _wait_gone(lambda: set(left), grace):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
