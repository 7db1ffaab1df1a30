"""The live run's pytest side: the cost guard printed before anything is sent, and `--max-requests` applied to
the collected rule items in collection order (the same cut in every xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from harness.engine.cost import budget_cut, plan_cost
from harness.engine.live import LiveForm, ScriptedAnswers, live_form
from harness.engine.scripted import scripted_answers
from harness.engine.target import not_applicable_reason
from harness.selection import run_variants

if TYPE_CHECKING:
    from harness.plugin.state import SessionState
    from harness.spec import Rule


def _forms(state: SessionState, pairs: Sequence[tuple[Rule, dict[str, Any]]]) -> list[LiveForm]:
    out = []
    answers: dict[str, ScriptedAnswers] = {}  # each cassette read once for the whole plan
    for rule, variant in pairs:
        reason = not_applicable_reason(rule, state.target)
        if reason:
            out.append(LiveForm(reason=reason))
            continue
        name = str((rule.upstream or {}).get("cassette") or "")
        if name not in answers:
            answers[name] = scripted_answers(rule)
        out.append(live_form(rule, variant, answers[name]))
    return out


def catalog_pairs(state: SessionState, args: Sequence[str]) -> Iterator[tuple[Rule, dict[str, Any]]]:
    """The rule variants a run over these paths will collect, in collection order."""
    return run_variants(args, state.profile.name, state.rule_patterns)


def announce(state: SessionState, config: pytest.Config) -> None:
    """Before sending: how many requests the live run makes and the most output tokens they may produce."""
    forms = _forms(state, list(catalog_pairs(state, config.args)))
    repeat = state.target.repeat
    plan = plan_cost(forms, repeat)
    lines = [plan.describe(repeat)]
    limit = config.option.max_requests
    if limit is not None and plan.requests > limit:
        kept = budget_cut(forms, repeat, limit)
        lines.append(
            f"--max-requests {limit}: the run stops there — {kept} of {len(forms)} rule variants run, "
            "the rest are SKIP (not sent)"
        )
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)


def guard_cost(state: SessionState, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the rule items beyond `--max-requests` so they are SKIP and send nothing."""
    limit = config.option.max_requests
    if limit is None:
        return
    rule_items = [item for item in items if hasattr(item, "rule") and hasattr(item, "variant")]
    forms = _forms(state, [(item.rule, item.variant) for item in rule_items])  # type: ignore[attr-defined]
    kept = budget_cut(forms, state.target.repeat, limit)
    message = f"--max-requests {limit} reached: not sent (the live run stopped at {limit} requests)"
    for item in rule_items[kept:]:
        item.over_budget = message  # type: ignore[attr-defined]
