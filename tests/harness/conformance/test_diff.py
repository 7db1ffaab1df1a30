"""`gateway-conformance diff A B` on real pairs: the same peer's stored runs on two catalog versions
(tests/fixtures/runs/), and the classification of every kind of change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as cli_main
from harness.conformance.diff import compare, render, state
from harness.conformance.runs import Run, load_run
from harness.errors import ConfigError
from harness.outcomes import count_outcomes

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "runs"
OLD, NEW = RUNS / "litellm-1.110.2-openai-3fa1b62", RUNS / "litellm-1.110.2-openai-6dd8ed0"


def test_the_stored_litellm_runs_of_two_catalogs_compare_rule_by_rule() -> None:
    c = compare(load_run(OLD), load_run(NEW))
    assert [(ch.rule_id, ch.variant, ch.before, ch.after) for ch in c.regressions] == [
        ("openai/request/safety-identifier-accepted", "stream=false", None, "FAIL"),
        ("openai/request/safety-identifier-accepted", "stream=true", None, "FAIL"),
    ]
    counts = c.counts()
    assert counts["new-warn"] == 5 and counts["improvement"] == 5
    assert counts["added"] == 14 and counts["removed"] == 1
    assert counts["changed-reason"] == 0 and c.unchanged == 164
    # The repeated tool-call `type` was a MUST in the older catalog (four rules failed on it) and is one SHOULD now.
    assert {ch.rule_id for ch in c.of("improvement")} >= {"openai/tools/parallel-indexes"}
    warned = next(
        ch for ch in c.of("new-warn") if ch.rule_id == "openai/tools/continuation-type-not-repeated"
    )
    assert "a continuation fragment repeats type (x4)" in warned.after_reason
    assert c.catalogs == {
        "openai": (
            "862f860ba1ac3e8862befc3dc7e8c61ca7f706835ce33c8784a52be6113a9b47",
            "fd4a92e8dd381b3cbd4f172248c19028cb49aa2076eafbb3a04bd8411cdb8391",
        )
    }


def test_diff_exits_1_on_a_regression_and_prints_them_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["diff", str(OLD), str(NEW)]) == 1
    out = capsys.readouterr().out
    assert (
        out.index("regressions (failed in B, not in A): 2")
        < out.index("new WARN")
        < out.index("improvements")
    )
    assert "catalog openai changed: 862f860ba1ac → fd4a92e8dd38" in out
    assert out.rstrip().endswith(
        "diff: 2 regressions, 5 new WARN, 5 improvements, 14 added, 1 removed, 164 unchanged"
    )
    # The other way round, the newer run is the baseline: nothing it failed is new in the older one's... but the
    # older catalog's MUST rules on the repeated type fail there.
    assert cli_main(["diff", str(NEW), str(OLD)]) == 1
    assert "regressions (failed in B, not in A): 5" in capsys.readouterr().out


def test_markdown_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli_main(["diff", str(OLD), str(NEW), "--format", "markdown", "--out", str(tmp_path / "d.md")]) == 1
    )
    md = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert md.startswith("# gateway-conformance: what changed\n\n**regressions**: 2 regressions")
    assert (
        "| openai | `openai/request/safety-identifier-accepted [stream=false]` | MUST | (absent) → FAIL |"
        in md
    )
    assert "written to" in capsys.readouterr().out
    assert (
        cli_main(
            ["diff", str(OLD / "conformance-report.yaml"), str(NEW / "results.json"), "--format", "json"]
        )
        == 1
    )
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["regression"] == 2 and data["counts"]["unchanged"] == 164
    assert data["catalogs_changed"]["openai"]["a"].startswith("862f860b")
    assert {c["kind"] for c in data["changes"]} == {
        "regression",
        "new-warn",
        "improvement",
        "added",
        "removed",
    }


def test_a_rerun_of_the_same_behaviour_is_unchanged_though_ids_and_times_differ(tmp_path: Path) -> None:
    """What differs between two runs of one gateway (case markers, provider ids, times, ports) is no change."""
    document = json.loads((NEW / "results.json").read_text(encoding="utf-8"))
    again = json.loads(json.dumps(document))
    for doc, marker, ident, port in ((document, "0123abcd", "req_011CRDfqtwVgMO4RmCygPd8t", 4123),
                                     (again, "ffee0099", "req_01ABCDEFGHIJKLMNOPQRSTUV", 9)):  # fmt: skip
        for r in doc["results"]:
            for v in r["violations"]:
                v["message"] = (
                    f"{v['message']} [gc:x/y#{marker}] {ident} 127.0.0.1:{port} at 2026-12-0{port % 7}T01:02:03Z"
                )
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(document), encoding="utf-8")
    b.write_text(json.dumps(again), encoding="utf-8")
    c = compare(load_run(a), load_run(b))
    assert c.changes == () and c.unchanged == 190
    assert c.catalogs == {"openai": (None, None)}  # results files alone: the digest is not known, and said so
    assert "digest not known for A and B" in render(c, "text")


def _doc(*results: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "suite": {"name": "gateway-conformance", "version": "0.1.0"},
        "profile": {"name": "p", "doc": "d", "title": "t"},
        "target": {"gateway_url": "http://127.0.0.1:1/v1", "upstream": "replay"},
        "timings": {"started": 0.0, "finished": 1.0, "duration": 1.0},
        "totals": count_outcomes({"outcome": o} for _r, o, _w in results),
        "results": [
            {
                "rule_id": rid,
                "variant": {},
                "level": "MUST",
                "outcome": outcome,
                "violations": [{"check": "status", "path": "status", "message": why}] if why else [],
                "reason": None,
            }
            for rid, outcome, why in results
        ],
    }


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("PASS", "FAIL", "regression"),
        ("WARN", "FAIL", "regression"),
        ("NOT_APPLICABLE", "FAIL", "regression"),
        (None, "FAIL", "regression"),
        ("PASS", "XFAIL", "regression"),  # an expectations file excuses a failure; it is still one
        ("PASS", "WARN", "new-warn"),
        (None, "WARN", "new-warn"),
        ("PASS", "HARNESS_ERROR", "harness-error"),
        ("PASS", "NOT_APPLICABLE", "no-longer-judged"),
        ("FAIL", "SKIP", "no-longer-judged"),
        ("FAIL", "PASS", "improvement"),
        ("FAIL", "WARN", "improvement"),
        ("XFAIL", "XPASS", "improvement"),
        ("NOT_APPLICABLE", "PASS", "now-judged"),
        (None, "PASS", "added"),
        ("FAIL", None, "removed"),
        ("PASS", "PASS", None),
        ("FAIL", "XFAIL", None),  # declared now, failing as before
    ],
    ids=lambda v: str(v),
)
def test_each_kind_of_change(before: str | None, after: str | None, kind: str | None) -> None:
    a = Run("a", {"p": _doc(*([("r", before, "status 500")] if before else []))})
    b = Run("b", {"p": _doc(*([("r", after, "status 500")] if after else []))})
    c = compare(a, b)
    assert [ch.kind for ch in c.changes] == ([kind] if kind else [])


def test_a_failure_with_another_reason_is_a_changed_reason_not_a_regression() -> None:
    c = compare(
        Run("a", {"p": _doc(("r", "FAIL", "status 400"))}), Run("b", {"p": _doc(("r", "FAIL", "status 500"))})
    )
    assert [(ch.kind, ch.before_reason, ch.after_reason) for ch in c.changes] == [
        ("changed-reason", "status 400", "status 500")
    ]
    assert not c.regressions and state("FLAKY") == "failed"


def test_a_report_folder_with_its_clients_and_a_report_alone(tmp_path: Path) -> None:
    folder = tmp_path / "gc-report"
    (folder / "openai").mkdir(parents=True)
    shutil.copy(NEW / "results.json", folder / "openai" / "results.json")
    shutil.copy(NEW / "conformance-report.yaml", folder / "conformance-report.yaml")
    clients = json.loads((NEW / "results.json").read_text(encoding="utf-8"))
    clients["results"] = [{**clients["results"][0], "rule_id": "clients/openai-python/text", "variant": {}}]
    clients["totals"] = count_outcomes(clients["results"])
    clients["clients"] = {"openai-python": {"language": "python", "versions": {"openai": "3.57.0"}}}
    (folder / "clients" / "openai").mkdir(parents=True)
    (folder / "clients" / "openai" / "results.json").write_text(json.dumps(clients), encoding="utf-8")
    run = load_run(folder)
    assert sorted(run.documents) == ["clients:openai", "openai"]
    assert run.catalogs["openai"].startswith("fd4a92e8")
    assert load_run(folder / "conformance-report.yaml").documents.keys() == run.documents.keys()
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(NEW / "conformance-report.yaml", alone / "conformance-report.yaml")
    with pytest.raises(ConfigError, match="a conformance report alone has no per-rule outcomes"):
        load_run(alone / "conformance-report.yaml")
    (tmp_path / "junk.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a gateway-conformance results file"):
        load_run(tmp_path / "junk.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"no results\.json and no conformance-report\.yaml"):
        load_run(tmp_path / "empty")
