"""A report folder holds one run, never two (issue 46): a second run into the same --report-dir replaces the first's
report, a configuration error leaves the previous report as it was, a folder of other files is refused. And no run
touches another's files (issue 48): a folder a live run writes in is refused, a dead run's taken over, default
folders are created exclusively, and a destination that cannot be written is refused before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.report.folder import LOCK, MARK, fresh_report_dir, is_report, new_run_dir, writable_file


def _write_run(folder: Path, *profiles: str) -> None:
    (folder / "summary.md").write_text("# report\n", encoding="utf-8")
    for profile in profiles:
        (folder / profile).mkdir()
        (folder / profile / "junit.xml").write_text("<testsuites/>", encoding="utf-8")


def test_a_second_run_into_the_same_folder_replaces_the_first(tmp_path: Path) -> None:
    given = tmp_path / "gc-report"
    with fresh_report_dir(given, "unused") as folder:
        assert folder == given.resolve() and (folder / MARK).is_file()
        _write_run(folder, "ezat", "lyrouter")
    with fresh_report_dir(given, "unused") as folder:
        _write_run(folder, "ezat")
    assert sorted(p.name for p in given.iterdir()) == [
        MARK,
        "ezat",
        "summary.md",
    ]  # no stale lyrouter/junit.xml
    assert [p.name for p in tmp_path.iterdir()] == ["gc-report"]  # nothing left aside


def test_a_configuration_error_keeps_the_previous_report(tmp_path: Path) -> None:
    given = tmp_path / "gc-report"
    with fresh_report_dir(given, "unused") as folder:
        _write_run(folder, "ezat")
    with pytest.raises(ConfigError), fresh_report_dir(given, "unused") as folder:
        (folder / "half").mkdir()
        raise ConfigError("bad model map")
    assert sorted(p.name for p in given.iterdir()) == [MARK, "ezat", "summary.md"]
    with pytest.raises(ConfigError), fresh_report_dir(tmp_path / "new", "unused"):
        raise ConfigError("bad model map")
    assert not (tmp_path / "new").exists()


def test_an_older_report_is_recognised_and_other_folders_refused(tmp_path: Path) -> None:
    older = tmp_path / "older"
    older.mkdir()
    _write_run(older, "ezat")
    assert is_report(older)
    with fresh_report_dir(older, "unused") as folder:
        assert not (folder / "ezat").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine", encoding="utf-8")
    (mine / "summary.md").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a gateway-conformance report"), fresh_report_dir(mine, "x"):
        pass
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "mine"
    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="a file, not a folder"), fresh_report_dir(tmp_path / "file", "x"):
        pass


def test_default_folders_are_new_even_within_one_second(tmp_path: Path) -> None:
    root = tmp_path / "gc-report"
    with fresh_report_dir(None, str(root)) as first, fresh_report_dir(None, str(root)) as second:
        assert first != second and first.parent == second.parent == root.resolve()


# --- issue 48: runs never share or destroy each other's files ---------------------------------------------------


def test_a_folder_another_live_run_writes_in_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    given = tmp_path / "gc-report"
    with fresh_report_dir(given, "unused") as folder:
        _write_run(folder, "ezat")
        refused = pytest.raises(ConfigError, match=r"another gateway-conformance run \(pid \d+\) is writing")
        with refused, fresh_report_dir(given, "unused"):
            pass
        assert (folder / LOCK).is_file() and (
            folder / "ezat" / "junit.xml"
        ).is_file()  # the first run's, untouched
    assert not (given / LOCK).exists()


def test_a_dead_runs_lock_is_said_and_taken_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess
    import sys

    given = tmp_path / "gc-report"
    with fresh_report_dir(given, "unused") as folder:
        _write_run(folder, "ezat")
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    (given / LOCK).write_text(f"{gone.stdout.strip()} 1\n", encoding="utf-8")  # a run killed mid-way
    with fresh_report_dir(given, "unused") as folder:
        _write_run(folder, "lyrouter")
    assert "did not finish" in capsys.readouterr().out
    assert sorted(p.name for p in given.iterdir()) == [MARK, "lyrouter", "summary.md"]


def test_a_run_that_wrote_nothing_leaves_the_previous_report(tmp_path: Path) -> None:
    given = tmp_path / "gc-report"
    with fresh_report_dir(given, "unused") as folder:
        _write_run(folder, "ezat")
    with pytest.raises(KeyboardInterrupt), fresh_report_dir(given, "unused"):
        raise KeyboardInterrupt  # interrupted before it wrote anything
    assert sorted(p.name for p in given.iterdir()) == [MARK, "ezat", "summary.md"]
    with pytest.raises(KeyboardInterrupt), fresh_report_dir(given, "unused") as folder:
        (folder / "ezat").mkdir()
        (folder / "ezat" / "results.json").write_text("{}", encoding="utf-8")
        raise KeyboardInterrupt  # interrupted once it had written: its partial report is the folder's now
    assert sorted(p.name for p in given.iterdir()) == [MARK, "ezat"]


def test_concurrent_default_folders_are_each_created_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    root = tmp_path / "gc-report"
    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(lambda _i: new_run_dir(root), range(16)))
    assert len(set(made)) == 16 and all(p.is_dir() for p in made)


def test_unwritable_destinations_are_one_line_before_any_work(tmp_path: Path, read_only_dir: Path) -> None:
    refused = pytest.raises(ConfigError, match=r"--report-dir .*: cannot (create it|write there)")
    with refused, fresh_report_dir(read_only_dir / "gc-report", "unused"):
        raise AssertionError("no run starts")
    with pytest.raises(ConfigError, match=r"--report-json .*: cannot"):
        writable_file(read_only_dir / "results.json", "--report-json")
    with pytest.raises(ConfigError, match="a folder, not a file"):
        writable_file(tmp_path, "--report-json")
    writable_file(tmp_path / "new" / "results.json", "--report-json")
    assert (tmp_path / "new").is_dir() and not (tmp_path / "new" / "results.json").exists()
