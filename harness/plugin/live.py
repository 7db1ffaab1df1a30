"""The live run's pytest side: the cost guard printed before anything is sent, and `--max-requests` applied to
the collected rule items in collection order (the same cut in every xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from harness.engine.live import LiveForm, ScriptedAnswers, live_form
from harness.engine.scripted import scripted_answers
from harness.engine.target import not_applicable_reason
from harness.spec.selection import run_variants
from harness.surfaces import surface

if TYPE_CHECKING:
    from harness.plugin.state import SessionState
    from harness.spec import Rule


def _forms(state: SessionState, pairs: Sequence[tuple[Rule, dict[str, Any]]]) -> list[LiveForm]:
    out = []
    from harness.engine.costguard import large_request_reason

    answers: dict[str, ScriptedAnswers] = {}  # each cassette read once for the whole plan
    for rule, variant in pairs:
        reason = not_applicable_reason(rule, state.target)
        if reason:
            out.append(LiveForm(reason=reason))
            continue
        name = str((rule.upstream or {}).get("cassette") or "")
        if name not in answers:
            answers[name] = scripted_answers(rule)
        form = live_form(rule, variant, answers[name], surface(state.target.surface))
        large = large_request_reason(form, state.target.allow_large_requests)
        out.append(LiveForm(reason=large) if large else form)
    return out


def catalog_pairs(state: SessionState, args: Sequence[str]) -> Iterator[tuple[Rule, dict[str, Any]]]:
    """The rule variants a run over these paths will collect, in collection order."""
    return run_variants(args, state.profile.name, state.rule_patterns)


def announce(state: SessionState, config: pytest.Config) -> None:
    """Before sending: how many requests the live run makes, how many may reach a provider, and the most
    output tokens they may produce; with `--max-requests`, the plan recomputed for what the budget buys."""
    from harness.engine.costguard import choose, plan

    pairs = list(catalog_pairs(state, config.args))
    forms = _forms(state, pairs)
    repeat = state.target.repeat
    whole = plan(forms, repeat)
    lines = [whole.describe(repeat)]
    limit = config.option.max_requests
    if limit is not None and whole.requests > limit:
        chosen = choose(forms, [r.area for r, _ in pairs], repeat, limit)
        bought = plan([f for i, f in enumerate(forms) if i in chosen], repeat)
        lines.append(
            f"--max-requests {limit}: partial: {len(chosen)} of {whole.runnable} runnable rule variants will be "
            f"sent (specific checks first, spread over areas), the rest SKIP (budget); "
            + bought.describe(repeat).removeprefix("live run: ")
        )
    role = "MODEL" if "MODEL" in state.target.models else next(iter(state.target.models), None)
    model = state.target.models.get(role) if role else None
    if model:  # harness/orchestrate/preflight.py check_model, before any rule
        lines.append(
            f"the preflight sent one request more, naming the {role} id {model!r}: the gateway serves it"
        )
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)


def guard_cost(state: SessionState, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the runnable rule items the `--max-requests` budget does not buy so they are SKIP (budget) and send
    nothing; the items that cannot run live keep their own reason (NOT_APPLICABLE, as run_live says)."""
    from harness.engine.costguard import budget_reason, choose

    limit = config.option.max_requests
    rule_items = [item for item in items if hasattr(item, "rule") and hasattr(item, "variant")]
    forms = _forms(state, [(item.rule, item.variant) for item in rule_items])  # type: ignore[attr-defined]
    if limit is None:
        return
    chosen = choose(forms, [item.rule.area for item in rule_items], state.target.repeat, limit)  # type: ignore[attr-defined]
    for index, item in enumerate(rule_items):
        if forms[index].reason is None and index not in chosen:
            item.over_budget = budget_reason(limit)  # type: ignore[attr-defined]


def live_pass_status(result: dict[str, Any]) -> tuple[str, str, Any]:
    """pytest's (category, letter, word) for a live PASS: one that judged no specific check is counted and
    shown apart ("passed, shape only"), never as a plain PASS."""
    from harness.report.live import coverage_kind

    kind = coverage_kind(result)
    if kind == "specific":
        return ("passed", ".", "PASS")
    if kind == "structural":
        return ("passed (structural only)", "~", ("PASS (structural only)", {"yellow": True}))
    return ("passed (status and shape only)", "-", ("PASS (status and shape only)", {"yellow": True}))


def live_terminal_summary(document: dict[str, Any], terminalreporter: Any) -> None:
    """The pytest live run prints what `certify --upstream live` prints: the coverage table per area (in the
    summary before this, harness/plugin/summary.py), a budget cut, and a verdict line that says it is live."""
    from harness.engine.costguard import partial_line
    from harness.outcomes import exit_code
    from harness.report.live import VERDICT_NOTE

    partial = partial_line([document])
    if partial:
        terminalreporter.write_line(partial)
    words = {
        0: "all rules as expected",
        1: "unexpected failures",
        2: "the harness itself failed",
        5: "nothing judged",
    }
    verdict = partial or words[exit_code([document])]
    terminalreporter.write_line(f"live verdict ({VERDICT_NOTE}): {verdict}")
