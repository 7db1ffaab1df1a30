"""The live run's pytest side: the cost guard printed before anything is sent, and `--max-requests` applied to
the collected rule items in collection order (the same cut in every xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.live import LiveForm, budget_cut, live_form, plan_cost
from harness.runner import not_applicable_reason, rule_selected

if TYPE_CHECKING:
    from harness.plugin import SessionState
    from harness.spec import Rule


def _forms(state: SessionState, pairs: Sequence[tuple[Rule, dict[str, Any]]]) -> list[LiveForm]:
    out = []
    for rule, variant in pairs:
        reason = not_applicable_reason(rule, state.target)
        out.append(LiveForm(reason=reason) if reason else live_form(rule, variant))
    return out


def catalog_pairs(state: SessionState, args: Sequence[str]) -> Iterator[tuple[Rule, dict[str, Any]]]:
    """The rule variants a run over these paths will collect, in collection order."""
    from harness.spec import SpecError, load_rule_file, rule_files
    from harness.spec.loader import NON_RULE_FILES

    for arg in args:
        path = Path(arg.split("::")[0])
        files = [path] if path.is_file() else list(rule_files(path)) if path.is_dir() else []
        for file in sorted(files):
            if file.name in NON_RULE_FILES or {"schema", "coverage"} & set(file.parts):
                continue
            try:
                rules = load_rule_file(file).rules
            except SpecError:
                continue  # collection reports it
            for rule in rules:
                if rule.profile == state.profile.name and rule_selected(rule, state.rule_patterns):
                    for variant in rule.variant_combos():
                        yield rule, variant


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
