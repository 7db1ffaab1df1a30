"""certify --baseline RUN (issue 46): only a regression fails the run, what improved is said too; judged on the
stored runs of LiteLLM 1.110.2 on two catalogs (tests/fixtures/runs/), and end to end on the embedded gateway."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.certify.baseline import judge
from harness.cli import main as cli_main
from harness.conformance.runs import load_run

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
OLD, NEW = RUNS / "litellm-1.110.2-openai-3fa1b62", RUNS / "litellm-1.110.2-openai-6dd8ed0"


def _report(tmp_path: Path, run: Path) -> Path:
    folder = tmp_path / "gc-report"
    (folder / "openai").mkdir(parents=True)
    shutil.copy(run / "results.json", folder / "openai" / "results.json")
    shutil.copy(run / "conformance-report.yaml", folder / "conformance-report.yaml")
    (folder / "summary.md").write_text("# gateway-conformance report\n", encoding="utf-8")
    return folder


def test_the_failures_a_baseline_had_are_excused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _report(tmp_path, NEW)
    assert judge(load_run(NEW), load_run(folder), 1, folder) == 0  # 8 FAIL, each as in the baseline
    out = capsys.readouterr().out
    assert "verdict against the baseline: no regression (8 failure(s) as in the baseline)" in out
    assert "# Against the baseline" in (folder / "summary.md").read_text(encoding="utf-8")
    assert json.loads((folder / "baseline.json").read_text(encoding="utf-8"))["counts"]["regression"] == 0


def test_a_regression_fails_and_improvements_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _report(tmp_path, NEW)
    assert judge(load_run(OLD), load_run(folder), 1, folder) == 1
    out = capsys.readouterr().out
    assert "against the baseline" in out and "2 regressions" in out and "5 improvements" in out
    assert "openai/request/safety-identifier-accepted [stream=false]" in out
    assert "verdict against the baseline: 2 regression(s)" in out
    md = (folder / "baseline.md").read_text(encoding="utf-8")
    assert "## Improvements: 5" in md and "## Regressions (failed in B, not in A): 2" in md


def test_a_harness_failure_is_not_excused(tmp_path: Path) -> None:
    folder = _report(tmp_path, NEW)
    assert judge(load_run(NEW), load_run(folder), 2, folder) == 2


def test_a_baseline_that_is_not_a_run_is_exit_3_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["certify", "--profile", "ezat", "--baseline", str(tmp_path / "nothing")]) == 3
    assert "no such file or folder" in capsys.readouterr().err


@pytest.mark.e2e
def test_certify_against_its_own_earlier_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["certify", "--profile", "ezat", "--rule", "ezat/response/*", "--fuzz-examples", "0"]
    assert cli_main([*args, "--report-dir", str(tmp_path / "first")]) == 0
    assert (
        cli_main([*args, "--report-dir", str(tmp_path / "second"), "--baseline", str(tmp_path / "first")])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "against the baseline" in out
        and "unchanged" in out
        and "verdict against the baseline: no regression" in out
    )
    # The same folder again, judged against itself: the earlier report is read before this run replaces it.
    second = tmp_path / "second"
    assert cli_main([*args, "--report-dir", str(second), "--baseline", str(second)]) == 0
    assert (second / "baseline.md").is_file() and not list(tmp_path.glob(".second.previous-*"))
