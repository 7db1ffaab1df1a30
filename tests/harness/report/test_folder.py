"""A report folder holds one run, never two (issue 46): a second run into the same --report-dir replaces the first's
report, a configuration error leaves the previous report as it was, a folder of other files is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.report.folder import MARK, fresh_report_dir, is_report


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
