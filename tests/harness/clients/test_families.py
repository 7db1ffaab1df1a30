"""A client verdict never blames a library for the harness's limits (issue 46): each scenario scripts an answer per
provider family, as a rule's cassette set does (cassettes/clients/<family>/); what a family is not scripted for is
said up front and NOT_APPLICABLE — never a library's FAIL, never BROKEN."""

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
    everything = {"anthropic", "openai", "responses", "gemini"}
    assert {k for k, v in families.items() if v == everything} == {
        "text",
        "stream-text",
        "stream-usage",
        "rate-limit",
        "rate-limit-retry",
        "auth",
    }
    # Gemini's function calls carry no id to round-trip; the mid-stream error is scripted for Anthropic only.
    assert families["tool-round-trip"] == families["structured-output"] == everything - {"gemini"}
    assert families["mid-stream-error"] == {"anthropic"}


def test_the_tool_ids_that_come_back_are_the_ones_the_familys_script_gave() -> None:
    from harness.clients.judge import judge
    from harness.clients.observation import Observation, ToolCall

    scenario = load_scenarios().scenario("tool-round-trip")
    seen = Observation(
        text="It is 7 degrees in Oslo.", tool_calls=(ToolCall("x", "get_weather", {"city": "Oslo"}),)
    )
    second = {"input": [{"type": "message"}, {"type": "function_call", "call_id": "call_UCghWUu7g3DjrdBwyiNFB2tS"},
                        {"type": "function_call_output", "call_id": "call_UCghWUu7g3DjrdBwyiNFB2tS", "output": "7"}]}  # fmt: skip
    assert list(judge(scenario, seen, [{}, second], [200, 200], "responses")) == []
    wrong = [m.check for m in judge(scenario, seen, [{}, second], [200, 200], "anthropic")]
    assert wrong == ["tool_result_ids"]


@pytest.mark.e2e
def test_a_gateway_routing_the_model_to_openai_is_judged_on_its_script_not_blamed(
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
    assert "calls the openai provider family for gpt-5.5" in out and "(mid-stream-error)" in out
    assert not [k for k, (o, _r) in outcomes.items() if o == "FAIL"], outcomes
    assert unscripted == {"clients/openai-python/mid-stream-error"}
    assert "not the library's fault" in outcomes["clients/openai-python/mid-stream-error"][1]
    assert "BROKEN" not in out and code == 0  # READY on the nine scenarios the OpenAI family's script judges
