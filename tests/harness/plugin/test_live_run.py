"""Issue 20 items 3-5: a live result says what it judged, the cost guard tells billable from refused and spends a
budget on specific checks first, and replay and live apply one generic shape check that accepts what each
profile's doc allows."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from harness.checks import run_checks
from harness.cli import main
from harness.engine.costguard import choose, large_request_reason, plan
from harness.engine.live import LiveForm
from harness.exchange import Exchange, ReceivedResponse, SentRequest
from harness.orchestrate.embedded import reference_gateway
from harness.simulator.app import SimulatorServer
from harness.surfaces.chat_completions.shape import check_shape

CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def _stream_exchange(*payloads: dict[str, Any], url: str = "http://g/v1/chat/completions") -> Exchange:
    raw = b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads) + b"data: [DONE]\n\n"
    return Exchange(
        rule_id="relay/x/y",
        variant={"stream": True},
        request=SentRequest("POST", url, {}, b"{}", {}),
        response=ReceivedResponse(200, {"content-type": "text/event-stream"}, raw),
    )


# --- item 5: one judgment for replay and live --------------------------------------------------------


def test_a_chunk_that_omits_unset_fields_has_the_shape_relays_doc_allows() -> None:
    relay_style = _stream_exchange(
        {**CHUNK, "choices": [{"index": 0, "delta": {"content": "hi"}}]},  # no finish_reason: unset, omitted
        {**CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"error": {"message": "upstream failed", "type": "api_error"}},  # no param/code: unset, omitted
    )
    assert list(check_shape(True, relay_style)) == []
    empty = _stream_exchange({**CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": ""}]})
    (violation,) = check_shape(True, empty)
    assert violation.check == "shape" and "finish_reason" in violation.path


def test_the_generic_shape_is_judged_in_replay_too() -> None:
    """Before issue 20 only live mode added a schema check to a 2xx rule: replay judged this answer PASS."""
    broken = Exchange(
        rule_id="ezat/x/y",
        variant={},
        request=SentRequest("POST", "http://g/v1/chat/completions", {}, b"{}", {}),
        response=ReceivedResponse(200, {"content-type": "application/json"}, b'{"choices": []}'),
    )
    violations = [v for v in run_checks({"status": 200}, broken) if v.check == "shape"]
    assert violations, "a served chat answer without id/object/model is not the SDK's chat.completion"
    assert not [
        v for v in run_checks({"status": 200, "schema": "openai.models.list"}, broken) if v.check == "shape"
    ]


# --- item 4: the cost guard ---------------------------------------------------------------------------


def test_the_plan_counts_refused_requests_apart_and_the_budget_buys_specific_checks_first() -> None:
    forms = [
        LiveForm(max_tokens=10, specific_keys=()),  # caching, shape only
        LiveForm(max_tokens=10, specific_keys=()),  # caching, shape only
        LiveForm(
            max_tokens=0, specific_keys=("error",), billable=False
        ),  # refuse: refused before the provider
        LiveForm(max_tokens=10, specific_keys=("finish_reason",)),  # finish
        LiveForm(max_tokens=10, specific_keys=("json",)),  # tools
        LiveForm(reason="needs a provoked upstream fault"),  # errors
    ]
    areas = ["caching", "caching", "refuse", "finish", "tools", "errors"]
    whole = plan(forms, repeat=1)
    assert (whole.requests, whole.billable, whole.refused, whole.runnable) == (5, 4, 1, 5)
    assert "4 may reach a provider, 1 the doc says are refused before any provider call" in whole.describe(1)
    assert choose(forms, areas, 1, 3) == {2, 3, 4}  # one specific variant of each area before any shape-only
    assert choose(forms, areas, 1, 4) == {0, 2, 3, 4}
    assert 5 not in choose(forms, areas, 1, None)  # not runnable: never chosen, keeps its reason


def test_a_request_over_1_mb_needs_the_opt_in() -> None:
    big = LiveForm(prompt_bytes=33_554_432 + 1)
    reason = large_request_reason(big, allowed=False)
    assert reason is not None and "--allow-large-requests" in reason and "33.6 MB" in reason
    assert large_request_reason(big, allowed=True) is None
    assert large_request_reason(LiveForm(prompt_bytes=900_000), allowed=False) is None


# --- items 3 and 4 as a user runs them: the real catalog, the reference gateway over the simulator --------


@pytest.fixture(scope="module")
def live_gateway(tmp_path_factory: pytest.TempPathFactory) -> Any:
    key = "gc-" + secrets.token_hex(8)
    log = tmp_path_factory.mktemp("gw") / "gateway.log"
    with SimulatorServer(seed=1) as sim, reference_gateway("ezat", sim.url, key, log) as url:
        yield url, key


@pytest.mark.e2e
def test_a_live_run_cut_by_the_budget_is_partial_and_keeps_the_not_runnable_reasons(
    pytester: pytest.Pytester, live_gateway: tuple[str, str]
) -> None:
    url, key = live_gateway
    report = pytester.path / "r.json"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--gateway-url", url, "--gateway-key", key, "--profile", "ezat",
        "--upstream", "live", "--rule", "ezat/errors/*", "--rule", "ezat/caching/auto-*",
        "--max-requests", "6", "--report-json", str(report),
    )  # fmt: skip
    stdout = result.stdout.str()
    results = json.loads(report.read_text())["results"]
    by_outcome: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_outcome.setdefault(r["outcome"], []).append(r)
    sent = [r for r in results if r.get("live_coverage")]
    assert 0 < len(sent) <= 6
    assert all(r["live_coverage"]["judgment"] == "specific" for r in sent)  # the budget bought specific first
    assert all(r["reason"].startswith("SKIP (budget)") for r in by_outcome["SKIP"])
    over = [r for r in results if r["rule_id"] == "ezat/errors/body-over-32mb"]
    assert over and all(
        r["outcome"] == "NOT_APPLICABLE" and "--allow-large-requests" in r["reason"] for r in over
    )
    assert any("provoked" in r["reason"] for r in by_outcome["NOT_APPLICABLE"])  # reasons kept, not "budget"
    assert "partial:" in stdout and "runnable rule variants sent (--max-requests)" in stdout
    assert "all rules as expected" not in stdout
    assert "live coverage (rule variants): what each live result judged" in stdout


@pytest.mark.e2e
def test_certify_live_says_what_each_result_judged_everywhere(
    tmp_path: Path, live_gateway: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    url, key = live_gateway
    argv = ["certify", "--gateway-url", url, "--profile", "ezat", "--upstream", "live", "--gateway-key", key,
            "--rule", "ezat/caching/auto-*", "--rule", "ezat/refuse/n-*", "--report-dir", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "verdict (live, not a verdict of record): all rules as expected" in out
    assert "status and shape only" in out  # the coverage table's column
    certificate = (tmp_path / "certificate.html").read_text()
    assert "PASS (status and shape only)" in certificate  # a caching rule judged nothing of its own live
    assert "PASS (live)" in certificate and "live, not a verdict of record" in certificate
    assert "not observable live: upstream" in certificate
    summary = (tmp_path / "summary.md").read_text()
    assert "(live, not a verdict of record)" in summary and "| status and shape only |" in summary
    junit = (tmp_path / "ezat" / "junit.xml").read_text()
    assert 'name="live_judgment" value="shape"' in junit and 'name="live_judgment" value="specific"' in junit


# --- item 6 (the rules' live forms) -----------------------------------------------------------------------


def test_live_forms_that_hold_for_any_honest_model() -> None:
    from harness.spec import load_rule_file
    from harness.spec.loader import specs_dir

    def rule(path: str, rule_id: str) -> Any:
        return next(r for r in load_rule_file(specs_dir() / path).rules if r.id == rule_id)

    only_tools = rule("lyrouter/response.yaml", "lyrouter/response/content-with-only-tool-calls-anthropic")
    form = live_form_of(only_tools)
    assert form.rule is not None and form.rule.request["body"]["tool_choice"]["type"] == "function"
    assert form.rule.expect["finish_reason"] == "tool_calls" and "reading" in (only_tools.live or {})
    assert "1,024 tokens" in rule("ezat/response.yaml", "ezat/response/usage-plain").live["reading"]
    cached = live_form_of(rule("ezat/response.yaml", "ezat/response/usage-cache-read"))
    assert cached.send_twice and cached.rule is not None and cached.rule.request["marker"] == "none"
    assert cached.rule.level == "SHOULD" and cached.prompt_bytes > 4 * 1024 * 1.5  # well above 1,024 tokens


def live_form_of(rule: Any) -> LiveForm:
    from harness.engine.live import live_form
    from harness.engine.scripted import scripted_answers

    return live_form(rule, {"stream": False}, scripted_answers(rule))


@pytest.mark.e2e
def test_prompt_caching_is_observable_live(pytester: pytest.Pytester, live_gateway: tuple[str, str]) -> None:
    """Over the simulator (which caches only above 1,024 tokens): the second call reads the cache."""
    url, key = live_gateway
    report = pytester.path / "r.json"
    pytester.runpytest(
        "-p", "no:cacheprovider", "--gateway-url", url, "--gateway-key", key, "--profile", "ezat",
        "--upstream", "live", "--rule", "ezat/response/usage-cache-read", "--rule", "ezat/caching/automatic",
        "--report-json", str(report),
    )  # fmt: skip
    results = json.loads(report.read_text())["results"]
    assert len(results) == 4
    for r in results:
        assert r["outcome"] == "PASS", r
        assert r["live_coverage"]["judgment"] == "specific"


def test_a_filter_on_the_scripted_text_is_not_judged_live() -> None:
    """relay/streaming/every-text-chunk-forwarded-openai filters chunks by the cassette's words: live, a real
    model writes others, so the filter is dropped (it failed against every honest model before)."""
    from harness.spec import load_rule_file
    from harness.spec.loader import specs_dir

    rule = next(
        r
        for r in load_rule_file(specs_dir() / "relay" / "streaming.yaml").rules
        if r.id == "relay/streaming/every-text-chunk-forwarded-openai"
    )
    form = live_form_of_stream(rule)
    assert form.rule is not None and "chunks" not in form.rule.expect


def live_form_of_stream(rule: Any) -> LiveForm:
    from harness.engine.live import live_form
    from harness.engine.scripted import scripted_answers

    return live_form(rule, {"stream": True}, scripted_answers(rule))
