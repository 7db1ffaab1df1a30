"""The compatibility matrix: table building from results documents, rendering, and the run's orchestration."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import harness.orchestrate.matrix
from harness.cli import main as cli_main
from harness.orchestrate.matrix import run_matrix
from harness.report.matrix import NOT_RUN, Column, matrix_html, matrix_markdown, matrix_rows
from tests.harness.report.test_reports import _document, _result


def _columns() -> list[Column]:
    strict = _document(
        [
            _result("ezat/refuse/n", "PASS"),
            _result("ezat/finish/length", "PASS", variant={"stream": True}),
            _result("ezat/images/url", "NOT_APPLICABLE", reason="needs loopback-downloads"),
        ]
    )
    lenient = _document(
        [
            _result(
                "ezat/refuse/n",
                "FAIL",
                violations=[
                    {
                        "check": "status",
                        "path": "status",
                        "expected": 400,
                        "actual": 200,
                        "message": "status 200 <b>not</b> 400",
                    }
                ],
            ),
            _result("ezat/finish/length", "PASS", variant={"stream": True}),
        ]
    )
    return [
        Column("reference (ezat)", (strict,), {}, "http://127.0.0.1:1/v1"),
        Column("acme", (lenient,), {}, "http://127.0.0.1:2/v1"),
        Column("reference (relay)", (), {"ezat": "did not start: unknown profile relay"}),
    ]


def test_rows_follow_the_catalog_and_mark_where_gateways_differ() -> None:
    rows = matrix_rows(_columns())
    assert [(r.rule_id, r.variant) for r in rows] == [
        ("ezat/refuse/n", ""),
        ("ezat/finish/length", "stream=true"),
        ("ezat/images/url", ""),
    ]
    assert [r.cells for r in rows] == [
        ("PASS", "FAIL", NOT_RUN),
        ("PASS", "PASS", NOT_RUN),
        ("NOT_APPLICABLE", "", NOT_RUN),
    ]
    # A gateway that did not run says nothing; a rule missing from one run is a difference.
    assert [r.differs for r in rows] == [True, False, True]
    assert rows[0].notes[1] == "status 200 <b>not</b> 400"
    assert rows[0].notes[2] == "did not start: unknown profile relay"


def test_one_column_or_none_differs_nowhere() -> None:
    only = _columns()[:1]
    assert not any(r.differs for r in matrix_rows(only))
    assert matrix_rows([]) == []
    assert "Nowhere: every rule variant has the same outcome." in matrix_markdown(only)


def test_markdown_lists_differences_first_and_every_gateway() -> None:
    text = matrix_markdown(_columns())
    assert "3 rule variants x 3 gateways · 2 differ · 2026-01-01 00:00 UTC" in text
    differ = text.split("## Where the gateways differ (2)")[1].split("## All rule variants")[0]
    assert "| `ezat/refuse/n` |  | PASS | FAIL | not run |" in differ
    assert "ezat/finish/length" not in differ
    assert "| reference (relay) | ezat: did not start: unknown profile relay |" in text


def test_html_has_a_differs_filter_and_escapes_notes() -> None:
    page = matrix_html(_columns())
    assert page.count('data-differs="1"') == 2 and page.count('data-differs="0"') == 1
    assert 'id="d" type="checkbox"' in page and "only where the gateways differ" in page
    assert "status 200 &lt;b&gt;not&lt;/b&gt; 400" in page and "<b>not</b>" not in page
    assert len(re.findall("<script", page)) == 1


def test_run_matrix_reports_a_gateway_that_does_not_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The orchestration without child processes: the reference starts in ezat and fails in lyrouter."""
    runs: list[tuple[str, str, list[str]]] = []

    @contextlib.contextmanager
    def fake_reference(profile: str, upstream: str, key: str, log: Path) -> Iterator[str]:
        if profile != "ezat":
            raise harness.orchestrate.matrix.HarnessFailure(
                f"the reference gateway exited with code 2:\nunknown profile {profile}"
            )
        yield f"http://127.0.0.1:9/{profile}/v1"

    def fake_run_pytest(
        run: harness.orchestrate.matrix.Run, out_dir: Path, key: str | None, extra: list[str]
    ) -> dict[str, Any]:
        runs.append((run.gateway_url, run.profile, list(extra)))
        return _document([_result("ezat/refuse/n", "PASS")])

    monkeypatch.setattr(harness.orchestrate.matrix, "reference_gateway", fake_reference)
    monkeypatch.setattr(harness.orchestrate.matrix, "run_pytest", fake_run_pytest)
    monkeypatch.setattr(harness.orchestrate.matrix, "profiles_with_rules", lambda: ["ezat"])
    columns = run_matrix(tmp_path, ["ezat", "lyrouter"], rules=["ezat/refuse/*"])
    # The reference column states what the embedded gateway was started with (keep-alive silence, limit).
    assert runs == [
        (
            "http://127.0.0.1:9/ezat/v1",
            "ezat",
            ["--keepalive-silence", "2", "--nonstream-timeout", "20", "--rule", "ezat/refuse/*"],
        )
    ]
    assert [c.name for c in columns] == ["reference (ezat)", "reference (lyrouter)"]
    assert columns[1].errors == {
        "ezat": "did not start: the reference gateway exited with code 2: … unknown profile lyrouter"
    }
    assert matrix_rows(columns)[0].cells == ("PASS", NOT_RUN)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gateway", "acme"], "expected NAME=URL"),
        (["--gateway", "acme=http://127.0.0.1:8080/v1"], "needs the replay upstream at a known address"),
        (["--profiles", "nosuch"], "no selected profile has rules"),
    ],
    ids=["bad-gateway", "gateway-without-replay", "no-rules"],
)
def test_bad_arguments_exit_with_a_clear_message(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["matrix", *argv, "--out", str(tmp_path)]) == 3
    assert message in capsys.readouterr().err
