"""A run that judged nothing is never a pass (issue 35): its own verdict, UNJUDGED, exit 5 (as pytest's "no tests
collected") in certify, the plugin and clients, with no pass wording in the reports or the badge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as cli_main
from harness.orchestrate.child import replay_upstream
from harness.orchestrate.embedded import reference_gateway
from harness.outcomes import EXIT_NOTHING_JUDGED, count_outcomes, exit_code, verdict
from harness.report.badge import badge_svg


def document(*outcomes: tuple[str, str]) -> dict[str, Any]:
    results = [
        {"rule_id": f"p/a/r{i}", "outcome": o, "reason": why, "area": "a"}
        for i, (o, why) in enumerate(outcomes)
    ]
    return {"profile": {"name": "p"}, "results": results, "totals": count_outcomes(results), "target": {}}


NOT_CLAIMED = ("NOT_APPLICABLE", "not claimed: needs feature(s) not declared: models-endpoint")
NULL_ROLE = ("NOT_APPLICABLE", "model role(s) not mapped to a model: MODEL (see --model-map)")


def test_nothing_judged_is_its_own_verdict_and_exit_code() -> None:
    nothing = document(NOT_CLAIMED, NOT_CLAIMED)
    assert verdict(nothing) == "UNJUDGED" and exit_code([nothing]) == EXIT_NOTHING_JUDGED == 5
    assert "(nothing judged)" in badge_svg([nothing])
    assert verdict(document()) == "UNJUDGED"  # an empty slice


def test_a_null_role_that_leaves_most_of_the_run_unjudged_is_not_a_pass() -> None:
    mostly_null = document(("PASS", ""), NULL_ROLE, NULL_ROLE)
    assert verdict(mostly_null) == "UNJUDGED"
    assert verdict(document(("PASS", ""), ("PASS", ""), NULL_ROLE)) == "PASS"  # judged more than it left out
    assert (
        verdict(document(("PASS", ""), NOT_CLAIMED, NOT_CLAIMED)) == "PASS"
    )  # unclaimed features were not asked
    assert verdict(document(("FAIL", ""), NULL_ROLE, NULL_ROLE)) == "FAIL"  # a failure stays a failure


@pytest.mark.e2e
def test_certify_of_a_slice_it_cannot_judge_exits_5_without_pass_wording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "gc-nothing-judged-key"
    out = tmp_path / "report"
    with (
        replay_upstream() as replay_url,
        reference_gateway("ezat", replay_url, key, tmp_path / "gw.log") as url,
    ):
        # openai's model rules need feature models-endpoint, not declared here: every variant is not claimed.
        code = cli_main(["certify", "--gateway-url", url, "--gateway-key", key, "--replay-url", replay_url,
                         "--profile", "openai", "--rule", "openai/models/*", "--report-dir", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 5
    assert "nothing judged" in printed and "all rules as expected" not in printed
    assert "nothing judged" in (out / "badge.svg").read_text(encoding="utf-8")
    assert "every rule as expected" not in (out / "certificate.html").read_text(encoding="utf-8")
