"""Rules as pytest items: a rule file is a `SpecFile`, each rule variant a `RuleItem` named by its id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from harness.engine.run import run_rule
from harness.engine.target import Outcome
from harness.errors import RuleFailure, SpecError
from harness.evidence import failure_text, result_json
from harness.expectations import apply
from harness.outcomes import variant_label
from harness.plugin.state import STATE_KEY
from harness.spec import Rule, load_rule_file
from harness.spec.selection import selected, variants

if TYPE_CHECKING:
    from harness.plugin.state import SessionState

OUTCOME_KEY = pytest.StashKey[Outcome]()
FINAL_KEY = pytest.StashKey[tuple[str, Any]]()


class SpecFile(pytest.File):
    """One rule file. A malformed file is a collection error naming file, line and problem."""

    def collect(self) -> Iterator[RuleItem]:
        state: SessionState = self.config.stash[STATE_KEY]
        rule_file = load_rule_file(self.path)
        for rule, variant in variants(selected(rule_file.rules, state.profile.name, state.rule_patterns)):
            name = f"{rule.id}[{variant_label(variant)}]" if variant else rule.id
            yield RuleItem.from_parent(self, name=name, rule=rule, variant=variant)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, SpecError):
            return f"invalid rule file: {excinfo.value}"
        return str(super().repr_failure(excinfo))


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
        budget = getattr(self, "over_budget", None)  # live cost guard (harness/plugin/live.py)
        if budget:
            outcome = Outcome(self.rule.id, self.variant, "SKIP", reason=budget)
        else:
            ahead = state.ahead.take(self.nodeid) if state.ahead is not None else None
            outcome = ahead or self.run()
        self.stash[OUTCOME_KEY] = outcome
        expectation = state.expectations.find(self.rule.id, self.variant) if state.expectations else None
        final = apply(outcome.outcome, expectation)
        self.stash[FINAL_KEY] = (final, expectation)
        self.user_properties.append(("outcome", final))
        if final in ("NOT_APPLICABLE", "SKIP"):
            pytest.skip(f"{final}: {outcome.reason}")
        if final == "FLAKY" and state.target.strict:
            raise RuleFailure(
                "FLAKY under --strict: " + failure_text(self.rule, outcome, self.rerun_command())
            )
        if final == "XFAIL":
            pytest.xfail(f"expected failure: {expectation.reason if expectation else ''}")
        if final == "XPASS":
            raise RuleFailure(
                f"XPASS: {self.rule.id} [{variant_label(self.variant)}] now passes, but the expectations "
                f"file says {expectation.outcome if expectation else '?'} ({expectation.reason if expectation else ''}); "
                "remove or narrow the entry"
            )
        if final in ("FAIL", "HARNESS_ERROR"):
            raise RuleFailure(failure_text(self.rule, outcome, self.rerun_command()))

    def run(self) -> Outcome:
        """Run and judge this rule variant (here, or ahead of pytest's loop on a thread)."""
        state: SessionState = self.config.stash[STATE_KEY]
        return run_rule(self.rule, self.variant, state.target, state.http(), state.replay())

    def rerun_command(self) -> str:
        state: SessionState = self.config.stash[STATE_KEY]
        return state.rerun_command(self.rule.id)

    def result(self) -> dict[str, Any] | None:
        outcome = self.stash.get(OUTCOME_KEY, None)
        if outcome is None:
            return None
        result = result_json(self.rule, outcome, self.rerun_command(), self.nodeid)
        final, expectation = self.stash.get(FINAL_KEY, (outcome.outcome, None))
        result["outcome"] = final
        if expectation is not None:
            result["expectation"] = expectation.as_json()
        return result

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, RuleFailure):
            return excinfo.value.text
        if isinstance(
            excinfo.value, pytest.xfail.Exception
        ):  # pytest asks even for an XFAIL; it shows the reason
            return str(excinfo.value)
        try:
            return str(super().repr_failure(excinfo, style=style))
        except SystemError:
            # pytest's traceback formatting parses source with `ast`, and CPython 3.11's AST constructor state is
            # shared by threads (gh-106905): with rules running ahead on threads it can fail spuriously. The
            # frames, without their source, are still the account.
            return _plain_traceback(excinfo.value)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.rule.line - 1 if self.rule.line else None, f"rule {self.name}"


def _plain_traceback(exc: BaseException) -> str:
    """The frames and the exception, read without parsing any source (traceback.extract_tb reads line numbers)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    lines = [f'  File "{f.filename}", line {f.lineno}, in {f.name}' for f in frames]
    return "\n".join(["Traceback (most recent call last):", *lines, f"{type(exc).__name__}: {exc}"])


class ExpectationsCheck(pytest.Item):
    """Fails the run when the expectations file has rotted: expired entries, entries naming no rule."""

    def __init__(self, *, problems: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = problems

    def runtest(self) -> None:
        raise RuleFailure(
            "the expectations file needs attention:\n" + "\n".join(f"  - {p}" for p in self.problems)
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:  # type: ignore[override]
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return "expectations", None, "expectations file"
