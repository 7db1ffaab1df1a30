"""The live progress of catalog runs side by side (certify, embedded): one line saying which catalogs are done and
how many rule variants are judged so far, redrawn in place on a terminal (a line per finished catalog elsewhere),
read from each child's output file; and that output without its rows of progress characters, for the terminal
once a run is done (the whole output stays in the run's folder, `pytest-output.txt`)."""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

# A row of pytest's -q progress: one character per judged variant (the plugin's outcome letters), then `[ 40%]`.
_PROGRESS_ROW = re.compile(r"^[.FWnHsxXKEfpl]+( +\[ *\d+%\])?$")
_JUDGED = re.compile(r"[.FWnHsxXKEfpl]")


def judged(text: str) -> int:
    """How many variants a child's -q output has judged so far (its progress characters)."""
    return sum(
        len(_JUDGED.findall(line.split(" [")[0])) for line in text.splitlines() if _PROGRESS_ROW.match(line)
    )


def without_progress_rows(text: str) -> str:
    """The output less its progress rows: the failures, the summary line and what follows."""
    return "".join(
        line for line in text.splitlines(keepends=True) if not _PROGRESS_ROW.match(line.rstrip("\n"))
    )


class Progress:
    """`with Progress(runs):` draws the line until the block ends; `done(name)` when a run has finished."""

    def __init__(
        self, runs: Sequence[tuple[str, Path]], stream: TextIO | None = None, interval: float = 0.5
    ) -> None:
        self._runs = list(runs)
        self._stream = stream or sys.stdout
        self._live = bool(getattr(self._stream, "isatty", lambda: False)())
        self._interval = interval
        self._done: list[str] = []
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._draw_until_stopped, daemon=True)
        self._width = 0

    def __enter__(self) -> Progress:
        if self._live:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._live:
            self._thread.join()
            with self._lock:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()

    def done(self, name: str) -> None:
        with self._lock:
            self._done.append(name)
            if not self._live:  # a log, not a terminal: one line per finished catalog
                self._stream.write(self.line() + "\n")
                self._stream.flush()

    def line(self) -> str:
        total = 0
        for _name, output in self._runs:
            with contextlib.suppress(OSError):
                total += judged(output.read_text(encoding="utf-8", errors="replace"))
        running = [name for name, _ in self._runs if name not in self._done]
        now = time.monotonic() - self._started
        text = f"catalogs {len(self._done)}/{len(self._runs)} done · {total:,} variants judged · {now:.0f} s"
        if running and len(running) <= 4:
            text += " · running: " + ", ".join(running)
        return text

    def _draw_until_stopped(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                text = self.line()
                self._stream.write("\r" + text.ljust(self._width))
                self._stream.flush()
                self._width = len(text)
