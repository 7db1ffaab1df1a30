"""The hooks of an active conformance run: collecting rule files, the live cost guard, reporting each rule's
outcome in its own words, and the results file at the end."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.outcomes import EXIT_NOTHING_JUDGED, verdict
from harness.plugin.state import SessionState, is_worker

if TYPE_CHECKING:
    from harness.plugin.items import SpecFile


class ConformanceRun:
    """Hooks that exist only while a conformance run is active."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.collection_errors = 0  # every collector that failed, whatever else collected

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors += 1

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> SpecFile | None:
        from harness.plugin.items import SpecFile
        from harness.spec.selection import collection_root, is_rule_file

        roots = [Path(a.split("::")[0]).resolve() for a in parent.config.args]
        if self.state.specs_root is not None:
            roots.append(self.state.specs_root.resolve())
        if not is_rule_file(file_path, collection_root(file_path.resolve(), roots)):
            return None
        from harness.plugin.summary import file_label

        # Named as a user can open it (issue 46): pytest named the bundled files relative to the profile's folder
        # (`errors.yaml`), or with `..` from a rootdir elsewhere, neither a path there is.
        label = file_label(file_path, self.state.specs_root)
        return SpecFile.from_parent(parent, path=file_path, nodeid=label)  # type: ignore[no-any-return]

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.state.target.upstream_mode == "live":
            from harness.plugin.live import guard_cost

            guard_cost(self.state, config, items)
        if self.state.expectations is None:
            return
        from datetime import datetime, timezone

        from harness.paths import specs_root
        from harness.plugin.items import ExpectationsCheck
        from harness.spec import load_rule_file
        from harness.spec.selection import rule_files

        root = self.state.specs_root or specs_root()
        catalog = [
            r.id for path in rule_files(root / self.state.profile.name) for r in load_rule_file(path).rules
        ]
        catalog += [item.rule.id for item in items if hasattr(item, "rule")]  # rules from user-given paths
        problems = self.state.expectations.stale(catalog, datetime.now(timezone.utc).date())
        self.state.expectation_problems = problems
        if problems:
            items.append(ExpectationsCheck.from_parent(session, name="expectations-file", problems=problems))

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """The roles the model map leaves out, which take the profile's default ids: said, never silent."""
        from harness.modelmap import left_out, left_out_line

        missing = left_out(config.option.model_map, self.state.profile)
        return [left_out_line(config.option.model_map, missing)] if missing else []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.state.target.upstream_mode == "live" and not is_worker(session.config):
            from harness.plugin.live import announce

            announce(self.state, session.config)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        """With --concurrency above 1, every rule variant starts ahead of pytest's loop, the ones that wait on
        a clock first (harness/engine/ahead.py); the loop reports them in order as they finish."""
        from harness.plugin.items import RuleItem

        runnable = [
            item
            for item in session.items
            if isinstance(item, RuleItem) and not getattr(item, "over_budget", None)
        ]
        if self.state.workers > 1 and len(runnable) > 1 and not session.config.option.collectonly:
            from harness.engine.ahead import RunAhead, expected_wait

            self.state.ahead = RunAhead(self.state.workers)
            self.state.ahead.start(
                (item.nodeid, expected_wait(item.rule, item.variant, self.state.target), item.run)
                for item in runnable
            )
        interrupted = False
        try:
            return (yield)
        except KeyboardInterrupt:  # SIGINT or SIGTERM (Interrupted): the rules in flight are not waited for
            interrupted = True
            raise
        finally:
            if self.state.ahead is not None:
                self.state.ahead.close(wait=not interrupted)
                self.state.ahead = None

    @pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown when xdist is not loaded
    def pytest_configure_node(self, node: Any) -> None:  # xdist: hand the replay URL to workers
        node.workerinput["gc_replay_url"] = self.state.target.replay_url

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, Any]:
        from harness.plugin.items import RuleItem

        report = yield
        if isinstance(item, RuleItem) and call.when == "call":
            result = item.result()
            if result is not None:
                report.gc = result  # survives xdist: reports are serialized with their __dict__
                if result.get("live_coverage"):  # JUnit: what a live result judged (harness/report/live.py)
                    from harness.report.live import coverage_kind

                    item.user_properties.append(("live_judgment", coverage_kind(result)))
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        result = getattr(report, "gc", None)
        if report.when != "call" or result is None:
            return None
        if result.get("live_coverage") and result["outcome"] == "PASS":
            from harness.plugin.live import live_pass_status

            return live_pass_status(result)  # a PASS that judged no specific check is its own class
        return {
            "PASS": ("passed", ".", "PASS"),
            "FAIL": ("failed", "F", "FAIL"),
            "WARN": ("warned", "W", ("WARN", {"yellow": True})),
            "NOT_APPLICABLE": ("not applicable", "n", "NOT_APPLICABLE"),
            "HARNESS_ERROR": ("harness error", "H", ("HARNESS_ERROR", {"red": True})),
            "SKIP": ("skipped", "s", "SKIP"),
            "XFAIL": ("xfailed", "x", "XFAIL"),
            "XPASS": ("failed", "X", ("XPASS", {"red": True})),
            # FLAKY fails the run under --strict (the item raised), and is shown as its own word otherwise.
            "FLAKY": ("failed" if report.failed else "flaky", "K", ("FLAKY", {"yellow": True})),
        }[result["outcome"]]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """HARNESS_ERROR reports are their own category, which pytest's FAILURES and -r summaries skip: say
        each one's reason here, always (a run that could not judge a rule must say why). Then what certify prints:
        the table per area, failures that share a cause, known failures (harness/plugin/summary.py)."""
        self._harness_errors(terminalreporter)
        if is_worker(terminalreporter.config) or terminalreporter.config.option.collectonly:
            return
        from harness.plugin.summary import terminal_summary

        document = report_document(self.state, self.collection_errors)
        terminal_summary(document, self.state.specs_root, terminalreporter)
        if self.state.target.upstream_mode == "live":
            from harness.plugin.live import live_terminal_summary

            live_terminal_summary(document, terminalreporter)

    def _harness_errors(self, terminalreporter: Any) -> None:
        reports = [r for r in terminalreporter.stats.get("harness error", []) if r.when == "call"]
        if not reports:
            return
        terminalreporter.write_sep("=", "HARNESS ERRORS (the suite's own fault, not the gateway's)", red=True)
        for report in reports:
            if terminalreporter.config.option.tbstyle != "no":
                terminalreporter.write_sep("_", report.head_line or report.nodeid, red=True)
                terminalreporter.line(report.longreprtext)
        for report in reports:
            reason = (getattr(report, "gc", None) or {}).get("reason") or ""
            terminalreporter.line(
                f"HARNESS_ERROR {report.nodeid} - {reason.splitlines()[0] if reason else ''}"
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, "gc", None)
        if result is not None and report.when == "call":
            self.state.results.append(result)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        config = session.config
        if is_worker(config):
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:  # SIGINT or SIGTERM: what was judged so far, marked so
            from harness.orchestrate.processes import received, signal_name

            self.state.interrupted = signal_name(received() or 2)
        if config.option.write_expectations and not self.state.interrupted:
            import yaml

            from harness.expectations import from_failures

            document = from_failures(
                self.state.profile.name, self.state.results, self.state.target.gateway_url
            )
            Path(config.option.write_expectations).write_text(
                yaml.safe_dump(document, sort_keys=False), encoding="utf-8"
            )
        document = report_document(self.state, self.collection_errors)
        if exitstatus == 0 and not config.option.collectonly and verdict(document) == "UNJUDGED":
            # A run that judged nothing (or too little of what it was asked) never reports success (README, exit 5).
            session.exitstatus = EXIT_NOTHING_JUDGED
            reporter = config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(
                    "gateway-conformance: nothing judged (no selected rule variant ran): exit 5, not a pass"
                )
        if not config.option.report_json:
            return
        write_report(
            Path(config.option.report_json),
            self.state,
            collection_errors=self.collection_errors,
        )


def report_document(state: SessionState, collection_errors: int = 0) -> dict[str, Any]:
    """The results file (specs/schema/report.schema.json) of this run."""
    from harness.report.document import results_document

    target = state.target
    return results_document(
        profile={"name": state.profile.name, "doc": state.profile.doc, "title": state.profile.title},
        target={
            "gateway_url": target.gateway_url,
            "upstream": target.upstream_mode,
            "replay_url": target.replay_url,
            "models": dict(target.models),
            "features": sorted(target.features),
            "strict": target.strict,
            **({"repeat": target.repeat} if target.upstream_mode == "live" else {}),
        },
        results=state.results,
        started=state.started,
        collection_errors=collection_errors,
        expectation_problems=state.expectation_problems,
        interrupted=state.interrupted,
    )


def write_report(path: Path, state: SessionState, collection_errors: int = 0) -> None:
    from harness.report.document import write_document

    write_document(path, report_document(state, collection_errors))
