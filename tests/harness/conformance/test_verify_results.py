"""verify-report --results: a report is checked against the results files it was built from (issue 35), so
FAILs edited to PASS in the report, or in the results, are refused; and the output says what it does not prove."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli import main as cli_main


@pytest.mark.e2e
def test_a_report_edited_after_its_run_is_refused_with_its_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert (
        cli_main(
            [
                "certify",
                "--profile",
                "ezat",
                "--rule",
                "ezat/response/*",
                "--fuzz-examples",
                "0",
                "--report-dir",
                str(out),
            ]
        )
        == 0
    )
    report, results = out / "conformance-report.yaml", out / "ezat" / "results.json"
    assert cli_main(["verify-report", str(report), "--results", str(results)]) == 0
    assert "does not prove a run produced it" in capsys.readouterr().out
    # The results edited (a PASS turned FAIL): the report is no longer what they give.
    document = json.loads(results.read_text(encoding="utf-8"))
    next(r for r in document["results"] if r["outcome"] == "PASS")["outcome"] = "FAIL"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(document), encoding="utf-8")
    assert cli_main(["verify-report", str(report), "--results", str(forged)]) == 1
    assert "outcomes digest is not that of these results" in capsys.readouterr().out
    # The report's digest edited: refused too.
    data = yaml.safe_load(report.read_text(encoding="utf-8"))
    data["profiles"][0]["outcomes_sha256"] = "0" * 64
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert cli_main(["verify-report", str(edited), "--results", str(results)]) == 1
