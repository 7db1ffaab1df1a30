"""`gateway-conformance certify`: exit codes, configuration errors, and one real run of a small catalog slice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.cli import main
from harness.outcomes import EXIT_CONFIG, EXIT_FAILURES, EXIT_HARNESS, EXIT_OK, exit_code
from harness.paths import schema_path
from harness.report.text import summarize


def _doc(**totals: int) -> dict[str, Any]:
    base = {
        "PASS": 0,
        "FAIL": 0,
        "WARN": 0,
        "SKIP": 0,
        "NOT_APPLICABLE": 0,
        "HARNESS_ERROR": 0,
        "XFAIL": 0,
        "XPASS": 0,
    }
    return {
        "profile": {"name": "ezat"},
        "totals": {**base, **totals},
        "results": [],
        "collection_errors": 0,
        "expectation_problems": [],
    }


@pytest.mark.parametrize(
    ("documents", "code"),
    [
        ([_doc(PASS=3, WARN=1, NOT_APPLICABLE=2, XFAIL=1)], EXIT_OK),
        ([_doc(PASS=3), _doc(FAIL=1)], EXIT_FAILURES),
        ([_doc(XPASS=1)], EXIT_FAILURES),
        ([{**_doc(PASS=1), "expectation_problems": ["expired"]}], EXIT_FAILURES),
        ([_doc(FAIL=2, HARNESS_ERROR=1)], EXIT_HARNESS),
        ([{**_doc(), "collection_errors": 1}], EXIT_HARNESS),
    ],
    ids=[
        "warn-and-xfail-are-fine",
        "a-fail",
        "xpass",
        "stale-expectation",
        "harness-error-wins",
        "bad-rule-file",
    ],
)
def test_exit_code(documents: list[dict[str, Any]], code: int) -> None:
    assert exit_code(documents) == code


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["certify", "--gateway-url", "http://127.0.0.1:9/v1", "--profile", "nope"],
            "unknown profile 'nope'",
        ),
        (["certify", "--gateway-url", "http://127.0.0.1:9/v1"], "needs exactly one --profile"),
        (["certify", "--gateway-url", "http://127.0.0.1:9/v1", "--profile", "ezat"], "--replay-port P"),
        (["certify", "--profile", "nope"], "unknown profile(s) nope"),
        (
            [
                "certify",
                "--gateway-url",
                "http://127.0.0.1:9/v1",
                "--profile",
                "ezat",
                "--upstream",
                "live",
                "--model-map",
                "/no/such/file.yaml",
            ],
            "--model-map /no/such/file.yaml: no such file",
        ),
        (["certify", "--expectations", "/no/such/known.yaml"], "no such file"),
    ],
    ids=[
        "unknown-profile",
        "no-profile",
        "no-replay",
        "unknown-embedded-profile",
        "model-map",
        "expectations",
    ],
)
def test_bad_configuration_exits_3_with_a_message(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--report-dir", str(tmp_path)]) == EXIT_CONFIG
    assert message in capsys.readouterr().err


def test_unknown_command_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bogus"]) == EXIT_CONFIG
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.e2e
def test_certify_the_embedded_reference_gateway(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's main command, on a slice of the ezat catalog: exit 0 and a complete report folder."""
    code = main(["certify", "--profile", "ezat", "--rule", "ezat/finish/*", "--report-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == EXIT_OK, out
    document = json.loads((tmp_path / "ezat" / "results.json").read_text())
    jsonschema.Draft202012Validator(json.loads(schema_path("report").read_text())).validate(document)
    assert document["target"]["description"] == "reference gateway (embedded)"
    assert document["totals"]["PASS"] >= 10 and document["totals"]["FAIL"] == 0
    assert {r["area"] for r in document["results"]} == {"finish"}
    # The embedded servers stop with the run: a rerun line starts them again (issue 15).
    rule = document["results"][0]["rule_id"]
    assert document["results"][0]["rerun"] == f"gateway-conformance certify --profile ezat --rule {rule}"
    for name in ("summary.md", "certificate.html", "badge.svg", "ezat/junit.xml", "ezat/gateway.log"):
        assert (tmp_path / name).is_file(), name
    assert "verdict: all rules as expected" in out
    assert summarize([document]).splitlines()[-1].split()[:3] == [
        "ezat",
        "(all)",
        str(document["totals"]["PASS"]),
    ]


@pytest.mark.e2e
def test_the_embedded_certify_fuzzes_each_gateway_into_a_robustness_area(tmp_path: Path) -> None:
    """Issue 13: certify's embedded run also sends a small fixed-seed budget of hostile requests."""
    from harness.certify.command import certify_embedded

    (document,) = certify_embedded(
        ["ezat"], features=[], report_dir=tmp_path, extra=["--rule", "ezat/finish/end-turn"], fuzz_examples=12
    )
    robustness = [r for r in document["results"] if r["area"] == "robustness"]
    assert {r["rule_id"] for r in robustness} >= {
        "robustness/no-5xx-for-client-errors",
        "robustness/error-envelope",
    }
    assert all(r["outcome"] == "PASS" for r in robustness), [r["violations"] for r in robustness]
    on_disk = json.loads((tmp_path / "ezat" / "results.json").read_text())
    assert on_disk["totals"] == document["totals"] and on_disk["totals"]["PASS"] == len(
        [r for r in document["results"] if r["outcome"] == "PASS"]
    )
    jsonschema.Draft202012Validator(json.loads(schema_path("report").read_text())).validate(on_disk)
