"""The claimed features' set-up (harness/featuresetup.py): the implementation file's `features:` block read, its keys
from the file or the environment, and what a claimed feature without its set-up is told; the keys rendered into a
rule's request and kept out of its evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine.render import render_request
from harness.engine.target import Target, missing_keys, not_applicable_reason
from harness.errors import ConfigError
from harness.exchange import Exchange, ReceivedResponse, SentRequest, UpstreamCall
from harness.featuresetup import FeatureSetup, load_feature_setup, setup_from
from harness.redact import redact_setup_keys
from harness.spec.model import Needs, Rule, Source

FEATURES = {
    "rate-limits": {"limited_key": "gc-limited", "own_mark": {"header": "x-own"}},
    "budget": {"over_budget_key": {"env": "GC_TEST_BUDGET_KEY"}},
    "cost": {"header": "x-cost", "prices": {"m": {"input": 1, "output": 2}}},
}


def test_keys_are_taken_out_of_the_declared_settings() -> None:
    setup = setup_from({"features": FEATURES}, {"GC_TEST_BUDGET_KEY": "gc-spent"}, "impl.yaml")
    assert dict(setup.keys) == {"RATE_LIMITED_KEY": "gc-limited", "OVER_BUDGET_KEY": "gc-spent"}
    assert "limited_key" not in setup.declared["rate-limits"]
    assert setup.declared["rate-limits"]["own_mark"] == {"header": "x-own"}
    assert dict(setup.declared["budget"]) == {}


def test_an_unset_environment_key_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="GC_TEST_BUDGET_KEY is not set"):
        setup_from({"features": FEATURES}, {}, "impl.yaml")


def test_a_claimed_feature_without_its_set_up_is_named() -> None:
    problems = FeatureSetup().missing_for(["rate-limits", "fallback", "cost", "tools"])
    assert [p.split()[1] for p in problems] == ["rate-limits", "cost"]


def test_the_file_is_checked_against_its_schema(tmp_path: Path) -> None:
    good = tmp_path / "impl.yaml"
    good.write_text("project: x\nfeatures:\n  cost: {header: x-cost, prices: {m: {input: 1, output: 2}}}\n")
    assert "cost" in load_feature_setup(good).declared
    bad = tmp_path / "bad.yaml"
    bad.write_text("features:\n  cost: {prices: {}}\n")  # neither header nor field
    with pytest.raises(ConfigError, match="--implementation"):
        load_feature_setup(bad)
    assert load_feature_setup(None) == FeatureSetup()


def _rule(request: dict[str, object]) -> Rule:
    return Rule(
        id="openai/budget/x",
        level="MUST",
        title="t",
        source=Source("d", "s", "q"),
        request=request,
        expect={"status": 402},
        needs=Needs(replay=False, models=frozenset(), features=frozenset(), without=frozenset()),
    )


def test_a_key_placeholder_is_rendered_and_an_undeclared_one_is_not_applicable() -> None:
    rule = _rule({"headers": {"authorization": "Bearer $OVER_BUDGET_KEY"}, "body": {"model": "m"}})
    setup = FeatureSetup(keys={"OVER_BUDGET_KEY": "gc-spent"})
    target = Target(gateway_url="http://gw/v1", gateway_key="gc-ok", setup=setup)
    sent = render_request(rule, {}, target, None)
    assert sent.headers["authorization"] == "Bearer gc-spent"
    assert missing_keys(rule, FeatureSetup()) == ["features.budget.over_budget_key"]
    reason = not_applicable_reason(rule, Target(gateway_url="http://gw/v1"))
    assert reason is not None and "features.budget.over_budget_key" in reason


def test_declared_keys_never_reach_the_evidence() -> None:
    call = UpstreamCall(
        "POST", "/v1/messages", {"x-leak": "gc-spent"}, b'{"k":"gc-spent"}', {"k": "gc-spent"}
    )
    exchange = Exchange(
        rule_id="r",
        variant={},
        request=SentRequest("POST", "u", {"authorization": "Bearer gc-spent"}, b"{}", {}),
        response=ReceivedResponse(402, {}, b"key gc-spent refused"),
        upstream=(call,),
    )
    clean = redact_setup_keys(exchange, {"OVER_BUDGET_KEY": "gc-spent"})
    assert clean.request.headers["authorization"] == "Bearer <OVER_BUDGET_KEY>"
    assert clean.response.raw == b"key <OVER_BUDGET_KEY> refused"
    assert clean.upstream is not None and clean.upstream[0].json == {"k": "<OVER_BUDGET_KEY>"}
    assert clean.upstream[0].headers["x-leak"] == "<OVER_BUDGET_KEY>"
