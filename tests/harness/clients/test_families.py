"""A client verdict never blames a library for the harness's limits (issue 46): the scenarios script Anthropic's
answers, so through a gateway that routes the clients' model to another provider family the run says so up front
and those scenarios are NOT_APPLICABLE — never a library's FAIL, never BROKEN."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.clients.families import scripted
from harness.clients.scenarios import load_scenarios
from harness.orchestrate.child import replay_upstream
from harness.orchestrate.embedded import reference_gateway

ROOT = Path(__file__).resolve().parents[3]
KEY = "gc-families-key-0123"


def test_each_scenario_names_the_families_it_scripts() -> None:
    catalog = load_scenarios()
    families = {s.id: scripted(s) for s in catalog.scenarios}
    assert families["text"] >= {"anthropic"}
    assert all(f for f in families.values())  # every scenario scripts some family, and says which


@pytest.mark.e2e
def test_a_gateway_routing_the_model_to_openai_gets_not_applicable_not_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model_map = (
        ROOT / "reference_gateway" / "model_maps" / "lyrouter" / "openai.yaml"
    )  # MODEL: gpt-5.5, OpenAI
    with replay_upstream() as replay, reference_gateway("lyrouter", replay, KEY, tmp_path / "gw.log") as url:
        code = cli_main(["clients", "--gateway-url", url, "--gateway-key", KEY, "--profile", "openai",
                         "--replay-url", replay, "--model-map", str(model_map), "--client", "openai-python",
                         "--report-dir", str(tmp_path / "r")])  # fmt: skip
    out = capsys.readouterr().out
    document = json.loads((tmp_path / "r" / "openai" / "results.json").read_text(encoding="utf-8"))
    outcomes = {r["rule_id"]: (r["outcome"], r["reason"]) for r in document["results"]}
    unscripted = {k for k, (o, _r) in outcomes.items() if o == "NOT_APPLICABLE"}
    assert "calls the openai provider family for gpt-5.5" in out
    assert not [k for k, (o, _r) in outcomes.items() if o == "FAIL"], outcomes
    assert all("not the library's fault" in outcomes[k][1] for k in unscripted)
    assert "BROKEN" not in out
    # What the scenarios do script for that family is judged; nothing is blamed, and nothing judged is not a pass.
    judged = {k for k, (o, _r) in outcomes.items() if o == "PASS"}
    assert code == (0 if judged else 5)
