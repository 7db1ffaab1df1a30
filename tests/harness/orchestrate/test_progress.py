"""The live progress of certify's catalog runs (harness/orchestrate/progress.py): variants counted from a child's
-q output as it grows, a line per finished catalog where the output is not a terminal, and the terminal's copy of a
run's output without its rows of progress characters (the report keeps them)."""

from __future__ import annotations

import io
from pathlib import Path

from harness.orchestrate.progress import Progress, judged, without_progress_rows

OUTPUT = """\
nnnnnnnnnnnnnn..............nn..nnnnnnnnn..nnnnnnnnnnnnnnnnnn........... [ 40%]
........................................nn..nn....F.....nnnnnnnnnn...... [ 80%]
....WxH
"""
FINISHED = (
    OUTPUT.rstrip("\n")
    + "                                                                 [100%]\n"
    + "=================================== FAILURES ===================================\n"
    + "FAIL: a/b [stream=true] (MUST) — words\n"
    + "117 passed, 61 not applicable in 18.42s\n"
)


def test_the_judged_variants_are_counted_as_the_output_grows() -> None:
    assert judged(OUTPUT) == 72 + 72 + 7
    assert judged(FINISHED) == 72 + 72 + 7
    assert judged("") == 0


def test_the_terminal_gets_the_failures_and_summary_without_the_rows() -> None:
    shown = without_progress_rows(FINISHED)
    assert "....." not in shown
    assert shown.startswith("====")
    assert shown.endswith("117 passed, 61 not applicable in 18.42s\n")
    assert "FAIL: a/b [stream=true] (MUST) — words" in shown


def test_a_line_per_finished_catalog_when_the_output_is_not_a_terminal(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(FINISHED)
    second.write_text("...")
    stream = io.StringIO()
    with Progress([("ezat", first), ("openai@relay", second)], stream=stream) as progress:
        progress.done("ezat")
    line = stream.getvalue()
    assert line.startswith("catalogs 1/2 done · 154 variants judged · ")
    assert line.rstrip().endswith("running: openai@relay")
    assert line.count("\n") == 1
