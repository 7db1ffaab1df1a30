"""The small ones of issue 48, each as the newcomer trial met it: an expiry written as YAML writes a date, the
same-failure note's quotes, summary.md's headings, raw HTML and size, fuzz's repro curl and its key, `clients
--list` on clients not installed yet, a role a model map leaves out, and the models a conformance report judged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.outcomes import count_outcomes


def _failed(rule: str, quote: str, message: str, status: int = 400) -> dict[str, Any]:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": "model_not_found"}}
    return {
        "rule_id": rule, "variant": {"stream": False}, "outcome": "FAIL", "level": "MUST", "area": rule.split("/")[1],
        "source": {"doc": "d", "section": "s", "quote": quote}, "reason": None,
        "violations": [{"check": "status", "path": "status", "expected": 200, "actual": status,
                        "message": f"status {status}: {message}"}],
        "exchange": {"response": {"status": status, "body": json.dumps(body)}},
    }  # fmt: skip


def _document(profile: str, results: list[dict[str, Any]], description: str) -> dict[str, Any]:
    return {
        "profile": {"name": profile, "doc": "d"}, "results": results, "totals": count_outcomes(results),
        "target": {"gateway_url": "http://gw/v1", "upstream": "replay", "description": description},
        "suite": {"version": "t"}, "timings": {"duration": 1.0}, "collection_errors": 0, "expectation_problems": [],
    }  # fmt: skip


def test_an_expiry_written_as_a_yaml_date_is_a_date(tmp_path: Path) -> None:
    from harness.expectations import load_expectations

    path = tmp_path / "known.yaml"
    path.write_text(
        "profile: ezat\nexpectations:\n  - {rule: ezat/x/y, outcome: FAIL, reason: known, expires: 2027-03-01}\n"
        "  - {rule: ezat/x/z, outcome: FAIL, reason: known, expires: 2027-03-02 10:00:00}\n",
        encoding="utf-8",
    )
    loaded = load_expectations(path, "ezat")  # it was "not of type 'string'"
    assert [e.expires.isoformat() for e in loaded.entries if e.expires] == ["2027-03-01", "2027-03-02"]


def test_the_same_failure_note_quotes_the_gateways_message_unchanged() -> None:
    from harness.report.text import summarize

    message = "The model `gemini-2.5-pro` does not exist (request 8f3a)"
    results = [_failed(f"openai/errors/r{i}", "q", message) for i in range(6)]
    text = summarize([_document("openai", results, "http://gw/v1")])
    assert f"“{message}”" in text  # it read `gemini-…-pro`
    assert "--model-map" in text  # and names the fix


def test_summary_md_heads_each_run_with_its_gateway_shows_html_as_text_and_fits_a_comment() -> None:
    from harness.report import markdown_summary

    quote = "Thinking comes back in <think>…</think> tags, never as a <script> or a table | cell."
    results = [_failed(f"anthropic/output/r{i:03}", quote, "x" * 400) for i in range(600)]
    documents = [
        _document("anthropic", results, f"reference gateway (embedded), profile {gateway}")
        for gateway in ("ezat", "lyrouter", "relay")
    ]
    summary = markdown_summary(documents)
    headings = [line for line in summary.splitlines() if line.startswith("## ")]
    assert headings == [f"## anthropic@{g} — FAIL" for g in ("ezat", "lyrouter", "relay")]  # not three alike
    assert "<think>" not in summary and "<script>" not in summary and "&lt;think&gt;" in summary
    assert len(summary) < 65_536 - 10_000  # a pull-request comment, with room for what certify appends
    assert "more failure(s): certificate.html and results.json have them all" in summary


def test_fuzz_repro_curl_sends_the_key_the_shell_fills_in(tmp_path: Path) -> None:
    from harness.fuzz.run import curl_repro
    from harness.fuzz.strategies import Case

    line = curl_repro("http://127.0.0.1:9/v1/chat/completions", Case("schema", b'{"x": 1}'))
    # curl replaced by a function that prints its arguments: what the shell hands curl
    shell = f"curl() {{ printf '%s\\n' \"$@\"; }}; {line}"
    out = subprocess.run(
        ["bash", "-c", shell], env={"GC_GATEWAY_KEY": "sk-secret", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "authorization: Bearer sk-secret" in out.splitlines()  # it sent `Bearer $GC_GATEWAY_KEY` as text


def test_clients_list_calls_no_uninstalled_client_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    monkeypatch.setenv("GC_NODE_CLIENTS_DIR", str(tmp_path / "node"))
    monkeypatch.setenv("GC_PY_CLIENTS_DIR", str(tmp_path / "py"))
    assert main(["clients", "--list"]) == 0
    listed = {
        line.split(" ")[1]: line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("client ")
    }
    assert "not installed yet" in listed["instructor"] and "ready to run" not in listed["instructor"]
    if "cannot run" not in listed["openai-node"]:  # with node and npm on PATH: not installed yet, said so
        assert "not installed yet" in listed["openai-node"]
    assert listed["openai-python"].endswith("ready to run")  # the [clients] extra is installed


def test_a_role_the_model_map_leaves_out_is_said_and_the_report_names_every_model(tmp_path: Path) -> None:
    from harness.modelmap import left_out, left_out_line
    from harness.spec import load_profile

    profile = load_profile("openai")
    path = tmp_path / "map.yaml"
    path.write_text("MODEL: my-model\n", encoding="utf-8")
    missing = left_out(path, profile)
    assert "MODEL" not in missing and "MODEL_SAMPLING" in missing
    assert not any(
        "UNKNOWN" in role for role in missing
    )  # deliberately an id no gateway serves: not one to map
    assert "MODEL_SAMPLING (" in left_out_line(path, missing)
    assert left_out(None, profile) == {}


def test_the_conformance_report_names_the_models_each_profile_ran_with() -> None:
    from harness.conformance.report import CatalogDigest, profile_entry

    document = _document("openai", [], "http://gw/v1")
    document["target"]["models"] = {"MODEL": "my-model", "MODEL_SAMPLING": None}
    catalog = CatalogDigest("openai", "OpenAI", "contract", {}, {}, "0" * 64, 0)
    entry = profile_entry(document, catalog)
    assert entry["models"] == {"MODEL": "my-model", "MODEL_SAMPLING": None}
