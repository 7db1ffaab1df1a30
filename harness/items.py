"""Rules as pytest items: a rule file is a `SpecFile`, each rule variant a `RuleItem` named by its id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from harness.evidence import failure_text, result_json
from harness.runner import Outcome, rule_selected, run_rule, variant_label
from harness.spec import Rule, SpecError, load_rule_file

if TYPE_CHECKING:
    from harness.plugin import SessionState

OUTCOME_KEY = pytest.StashKey["Outcome"]()
STATE_KEY = pytest.StashKey["SessionState"]()


class RuleFailure(Exception):
    """Raised by a RuleItem whose rule failed; carries the readable account."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class SpecFile(pytest.File):
    """One rule file. A malformed file is a collection error naming file, line and problem."""

    def collect(self) -> Iterator[RuleItem]:
        state: SessionState = self.config.stash[STATE_KEY]
        rule_file = load_rule_file(self.path)
        for rule in rule_file.rules:
            if rule.profile != state.profile.name or not rule_selected(rule, state.rule_patterns):
                continue
            for variant in rule.variant_combos():
                name = f"{rule.id}[{variant_label(variant)}]" if variant else rule.id
                yield RuleItem.from_parent(self, name=name, rule=rule, variant=variant)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, SpecError):
            return f"invalid rule file: {excinfo.value}"
        return str(super().repr_failure(excinfo, style=style))


class RuleItem(pytest.Item):
    def __init__(self, *, rule: Rule, variant: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.variant = variant
        self.user_properties += [
            ("rule_id", rule.id),
            ("level", rule.level),
            ("profile", rule.profile),
            ("area", rule.area),
            ("doc", rule.source.doc),
            ("section", rule.source.section),
            ("variant", variant_label(variant)),
        ]

    def runtest(self) -> None:
        state: SessionState = self.config.stash[STATE_KEY]
        outcome = run_rule(self.rule, self.variant, state.target, state.http(), state.replay())
        self.stash[OUTCOME_KEY] = outcome
        self.user_properties.append(("outcome", outcome.outcome))
        if outcome.outcome == "NOT_APPLICABLE":
            pytest.skip(f"NOT_APPLICABLE: {outcome.reason}")
        if outcome.outcome in ("FAIL", "HARNESS_ERROR"):
            raise RuleFailure(failure_text(self.rule, outcome, self.rerun_command()))

    def rerun_command(self) -> str:
        state: SessionState = self.config.stash[STATE_KEY]
        return state.rerun_command(self.rule.id)

    def result(self) -> dict[str, Any] | None:
        outcome = self.stash.get(OUTCOME_KEY, None)
        if outcome is None:
            return None
        return result_json(self.rule, outcome, self.rerun_command(), self.nodeid)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, RuleFailure):
            return excinfo.value.text
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.rule.line - 1 if self.rule.line else None, f"rule {self.name}"

