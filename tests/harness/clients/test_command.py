"""`gateway-conformance clients`: configuration errors exit 3 with one line, before anything starts; the
results it writes are the project's results format (the schema, JUnit)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from harness.cli import main
from harness.clients.junit import junit_xml
from harness.clients.table import markdown_table, text_table, verdicts
from harness.paths import schema_path

BAD = [
    ("two-profiles-one-gateway", ["--gateway-url", "http://127.0.0.1:9/v1", "--profile", "ezat", "--profile", "relay"],
     "exactly one --profile"),
    ("unknown-profile", ["--profile", "nope"], "unknown profile"),
    ("unknown-client", ["--client", "cobol-*"], "matches no client"),
    ("misspelt-client", ["--client", "openai-pyton"], "did you mean openai-python"),
    ("one-of-two-clients-unknown", ["--client", "openai-python", "--client", "anthropic-pyton"], "anthropic-python"),
    ("unknown-scenario", ["--scenario", "teleport"], "matches no scenario"),
    ("misspelt-scenario", ["--scenario", "tool-round-trp"], "did you mean tool-round-trip"),
    ("model-map-without-gateway", ["--model-map", "x.yaml"], "--model-map needs --gateway-url"),
    ("expectations-two-profiles", ["--expectations", "x.yaml"], "exactly one --profile"),
    ("bad-header", ["--header", "no-colon"], "expected NAME:VALUE"),
    ("gateway-without-replay", ["--gateway-url", "http://127.0.0.1:9/v1", "--profile", "ezat"], "--replay-port"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_configuration_errors_exit_3(
    argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["clients", "--report-dir", str(tmp_path / "out"), *argv]) == 3
    err = capsys.readouterr().err
    assert "configuration error" in err and words in err
    assert not (tmp_path / "out").exists()


@pytest.mark.e2e
def test_list_names_every_client_and_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clients", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("openai-python", "langchain-python", "openai-agents", "pydantic-ai", "instructor",
                 "llama-index", "openai-node", "ai-sdk", "langchain-js", "scenario tool-round-trip"):  # fmt: skip
        assert name in out


def _result(client: str, scenario: str, outcome: str, reason: str | None = None) -> dict[str, object]:
    return {
        "rule_id": f"clients/{client}/{scenario}", "variant": {}, "profile": "ezat", "area": f"clients/{client}",
        "level": "MUST", "title": scenario, "source": {"doc": "specs/clients/scenarios.yaml", "section": scenario,
        "quote": scenario}, "reading": None, "outcome": outcome, "reason": reason,
        "violations": [{"check": "clients.text", "path": "$", "message": "the library's text is ''"}] if outcome == "FAIL" else [],
        "duration": 0.1, "rerun": "gateway-conformance clients", "exchange": None,
    }  # fmt: skip


DOCUMENT = {
    "suite": {"name": "gateway-conformance", "version": "0"},
    "profile": {"name": "ezat", "doc": "ezat-chat-completions"},
    "target": {"gateway_url": "http://x/v1", "upstream": "replay", "description": "gw"},
    "timings": {"started": 0.0, "finished": 1.0, "duration": 1.0},
    "totals": {"PASS": 2, "FAIL": 1, "WARN": 0, "SKIP": 0, "NOT_APPLICABLE": 1, "HARNESS_ERROR": 0},
    "results": [
        _result("a", "text", "PASS"),
        _result("a", "stream-text", "FAIL"),
        _result("b", "text", "PASS"),
        _result("b", "stream-text", "NOT_APPLICABLE", "the doc says: no"),
    ],
    "clients": {"a": {"language": "python", "versions": {"a": "1.0"}}},
}


def test_the_document_shape_is_the_results_format() -> None:
    schema = json.loads(schema_path("report").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(DOCUMENT)


def test_table_verdicts_and_junit() -> None:
    assert verdicts([DOCUMENT]) == {"a": "LIMITED", "b": "READY"}
    table = text_table(DOCUMENT)
    assert "a       LIMITED  ok    FAIL" in table and "b       READY    ok    n/a" in table
    md = "\n".join(markdown_table(DOCUMENT))
    assert "| a | LIMITED | ok | FAIL |" in md and "a 1.0" in md and "the doc says: no" in md
    suite = ET.fromstring(junit_xml(DOCUMENT)).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")


def test_an_expectations_file_makes_a_known_client_failure_xfail_and_a_stale_entry_a_problem() -> None:
    from harness.clients.command import _expected
    from harness.expectations import parse_expectations
    from harness.outcomes import exit_code

    data = {
        "profile": "ezat",
        "gateway": "gw",
        "expectations": [
            {
                "rule": "clients/a/stream-text",
                "outcome": "FAIL",
                "reason": "a streams nothing",
                "ticket": "T-1",
                "expires": "2999-01-01",
            },
        ],
    }
    known = _expected(dict(DOCUMENT), parse_expectations(data, "x.yaml", "ezat"))
    assert [r["outcome"] for r in known["results"]] == ["PASS", "XFAIL", "PASS", "NOT_APPLICABLE"]
    assert exit_code([known]) == 0 and verdicts([known])["a"] == "LIMITED"
    data["expectations"].append(
        {
            "rule": "clients/zz/*",
            "outcome": "FAIL",
            "reason": "gone",
            "ticket": "T-2",
            "expires": "2999-01-01",
        }
    )
    stale = _expected(dict(DOCUMENT), parse_expectations(data, "x.yaml", "ezat"))
    assert stale["expectation_problems"] and exit_code([stale]) == 1


@pytest.mark.e2e
def test_certify_clients_adds_the_client_run_to_the_certificate_folder_and_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`certify --clients GLOB`: the clients run against the gateway certify judged, in the certified profiles;
    their results land in clients/, the grid in summary.md and the certificate, and they count in the exit code."""
    out = tmp_path / "report"
    code = main([
        "certify", "--profile", "ezat", "--rule", "ezat/refuse/n-*", "--fuzz-examples", "0",
        "--clients", "openai-python", "--report-dir", str(out),
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    document = json.loads((out / "clients" / "ezat" / "results.json").read_text())
    assert {r["rule_id"].split("/")[1] for r in document["results"]} == {"openai-python"}
    assert all(r["outcome"] == "PASS" for r in document["results"])
    summary = (out / "summary.md").read_text()
    assert "## Will my application work through it?" in summary and "**openai-python**: READY" in summary
    assert "clients/openai-python/" in (out / "certificate.html").read_text()
    assert "openai-python  READY" in printed


def test_profile_openai_and_anthropic_have_clients_and_the_embedded_gateways_model_ids() -> None:
    """`clients --profile openai` (any OpenAI-compatible gateway) and `--profile anthropic` are client profiles:
    embedded, their model role is the reference gateway's own id for it (its model map)."""
    from harness.clients.command import _model
    from harness.clients.scenarios import load_scenarios
    from harness.spec import load_profile

    catalog = load_scenarios()
    for name in ("openai", "anthropic"):
        assert catalog.profiles[name].gateway == "ezat"
        assert _model(load_profile(name), catalog, None, True) == "anthropic/claude-sonnet-5-5"
    assert (
        _model(load_profile("openai"), catalog, None, False) == "gpt-5.5"
    )  # a user's gateway: the profile default


@pytest.mark.e2e
def test_clients_that_judged_nothing_exit_5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """LYRouter's doc removes structured output on Anthropic channels: that one scenario is NOT_APPLICABLE, so a
    run of it alone judged nothing — exit 5, and no "as expected"."""
    from harness.cli import main as cli_main

    code = cli_main(["clients", "--profile", "lyrouter", "--client", "openai-python", "--scenario", "structured-output",
                     "--report-dir", str(tmp_path / "r")])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 5
    assert "no client scenario was judged" in printed and "as expected" not in printed


@pytest.mark.e2e
def test_a_client_that_could_not_run_is_not_as_expected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One client runs and passes, another is not installed: the run judged less than it was asked (exit 5),
    and says which client and how to install it (issue 34)."""
    import harness.clients.command as command
    from harness.clients.drivers import all_drivers
    from harness.clients.drivers.base import PythonDriver, classify_openai

    real = next(d for d in all_drivers() if d.id == "openai-python")
    ghost = PythonDriver(
        id="langchain-python", packages=("gc-no-such-dist",), module="gc_no_such_module", scenario=lambda j: None,  # type: ignore[arg-type,return-value]
        classify=classify_openai,
    )  # fmt: skip
    monkeypatch.setattr(command, "all_drivers", lambda: [real, ghost])
    code = main(["clients", "--profile", "ezat", "--scenario", "text", "--report-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 5
    assert "NOT RUN langchain-python" in out and "pip install -e '.[clients]'" in out
    assert "as expected" not in out
