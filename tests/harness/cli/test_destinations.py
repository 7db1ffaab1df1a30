"""Destinations are checked before the work (issue 48): a read-only --report-dir, a --report-dir that is a file and an
unwritable --report-json are one line and exit 3 before any rule runs (they were tracebacks and exit 1, some after
every rule had run), in certify and the pytest route alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.outcomes import EXIT_CONFIG


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("where", ["read-only", "a-file"])
def test_certify_refuses_a_report_dir_it_cannot_write_before_any_rule(
    tmp_path: Path, read_only_dir: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    if where == "a-file":
        target = tmp_path / "report"
        target.write_text("mine\n", encoding="utf-8")
    else:
        target = read_only_dir / "report"
    assert (
        main(["certify", "--profile", "ezat", "--rule", "ezat/response/*", "--report-dir", str(target)]) == 3
    )
    line = _one_line(capsys.readouterr().err)
    assert f"--report-dir {target}: " in line and ("a file, not a folder" in line or "cannot" in line)
    if where == "a-file":
        assert target.read_text(encoding="utf-8") == "mine\n"  # untouched


def test_the_pytest_route_refuses_an_unwritable_report_json_before_any_rule(
    pytester: pytest.Pytester, read_only_dir: Path
) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--gateway-url", "http://127.0.0.1:9/v1", "--profile", "ezat",
        "--replay-url", "http://127.0.0.1:9", "--report-json", str(read_only_dir / "results.json"),
    )  # fmt: skip
    assert result.ret == EXIT_CONFIG
    assert "--report-json" in result.stderr.str() and "cannot" in result.stderr.str()
    assert "collected" not in result.stdout.str()
