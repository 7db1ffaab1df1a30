"""The pytest11 entry point: `pytest --gateway-url URL --profile NAME` runs a profile's rules.

Without `--gateway-url` this plugin only adds its options: it collects nothing and changes nothing,
so installing the package never disturbs another project's pytest run.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.options import plugin_options
from harness.outcomes import EXIT_CONFIG, KEY_ENV

if TYPE_CHECKING:  # the heavy imports happen only when a conformance run is active
    import httpx

    from harness.items import SpecFile
    from harness.replay.client import ReplayClient
    from harness.runner import Target
    from harness.spec import Profile

SKIP_DIRS = frozenset({"schema", "coverage"})


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gateway-conformance", "gateway conformance (OpenAI-compatible gateways)")
    for flags, kwargs in plugin_options():
        group.addoption(*flags, **kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, Any, Any]:
    """A conformance run's bad configuration exits 3, as every gateway-conformance command does (pytest's
    own usage errors, found before this hook, keep its 4)."""
    if not config.getoption("gateway_url", None):
        return (yield)
    try:
        return (yield)
    except pytest.UsageError as exc:
        from _pytest.config import print_usage_error

        print_usage_error(exc, file=sys.stderr)
        return EXIT_CONFIG


@dataclass
class SessionState:
    """Per-process state of a conformance run."""

    target: Target
    profile: Profile
    rule_patterns: list[str]
    rerun_base: str
    replay_server: Any = None  # harness.replay.ReplayServer when this process serves it
    _http: httpx.Client | None = None
    _replay: ReplayClient | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    expectations: Any = None  # harness.expectations.Expectations
    expectation_problems: list[str] = field(default_factory=list)
    specs_root: Path | None = None  # where the profile's catalog lives (--specs-dir or the bundled specs/)

    def http(self) -> httpx.Client:
        if self._http is None:
            import httpx

            # No environment proxies: the gateway and the replay upstream are where the user said.
            self._http = httpx.Client(trust_env=False, follow_redirects=False)
        return self._http

    def replay(self) -> ReplayClient | None:
        if self.target.replay_url is None:
            return None
        if self._replay is None:
            from harness.replay.client import ReplayClient

            self._replay = ReplayClient(self.target.replay_url)
        return self._replay

    def rerun_command(self, rule_id: str) -> str:
        return f"{self.rerun_base} --rule {shlex.quote(rule_id)}"

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
        if self._replay is not None:
            self._replay.close()
        if self.replay_server is not None:
            self.replay_server.stop()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _load_model_map(path: str | None, profile: Profile) -> dict[str, str | None]:
    from harness.modelmap import ModelMapError, load_model_map

    try:
        return load_model_map(path, profile)
    except ModelMapError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _rerun_base(config: pytest.Config) -> str:
    opt = config.option
    if opt.rerun_base:
        return str(opt.rerun_base)
    parts = ["pytest", "--gateway-url", opt.gateway_url, "--profile", opt.profile]
    if opt.specs_dir:
        parts += ["--specs-dir", str(Path(opt.specs_dir).resolve())]
    # The key by reference, never its value: pasted, the line reads it from the environment.
    key = f'{KEY_ENV}="${KEY_ENV}" ' if opt.gateway_key or os.environ.get(KEY_ENV) else ""
    if opt.model_map:
        parts += ["--model-map", opt.model_map]
    if opt.upstream == "live":
        parts += ["--upstream", "live"]
    elif opt.replay_url:
        parts += ["--replay-url", opt.replay_url]
    elif opt.replay_port:
        parts += ["--replay-port", str(opt.replay_port)]
    for feature in opt.feature:
        parts += ["--feature", feature]
    if opt.gc_strict:
        parts.append("--strict-rules")
    if opt.keepalive_silence != 25.0:
        parts += ["--keepalive-silence", f"{opt.keepalive_silence:g}"]
    if opt.nonstream_timeout is not None:
        parts += ["--nonstream-timeout", f"{opt.nonstream_timeout:g}"]
    return key + " ".join(shlex.quote(p) for p in parts)


def _start_replay(config: pytest.Config) -> tuple[str | None, Any]:
    """The replay upstream URL: given, served here, or handed down by the xdist controller."""
    opt = config.option
    if opt.upstream == "live":
        return None, None  # live mode never contacts a replay upstream (the provider is not scripted)
    if _is_worker(config):
        return config.workerinput["gc_replay_url"], None  # type: ignore[attr-defined]
    if opt.replay_url:
        return opt.replay_url.rstrip("/"), None
    if opt.replay_port is None:
        raise pytest.UsageError(
            "--upstream replay needs the replay upstream your gateway talks to: pass --replay-port P "
            "(served here on 127.0.0.1:P; point the gateway's Anthropic base URL at http://127.0.0.1:P) or "
            "--replay-url URL (one you run with `gateway-conformance serve-upstream`); or use --upstream live."
        )
    from harness.paths import cassettes_dir
    from harness.replay import ReplayServer

    try:
        server = ReplayServer(cassettes_dir(), port=opt.replay_port)
        server.start()
    except OSError as exc:
        raise pytest.UsageError(
            f"--replay-port {opt.replay_port}: cannot serve the replay upstream: {exc}"
        ) from exc
    return server.url, server


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("gateway_url", None):
        return
    from harness.items import STATE_KEY
    from harness.paths import specs_root
    from harness.runner import Target

    opt = config.option
    root = specs_root(opt.specs_dir)
    profile = _check_options(opt, root)
    models = _load_model_map(opt.model_map, profile)
    expectations = _load_expectations(opt.expectations, profile.name)
    # Run the profile's catalog unless the user named paths (e.g. a folder of their own rules).
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(root / profile.name)]
    if not _is_worker(config):
        _check_selection(config, profile.name)
    replay_url, server = _start_replay(config)
    target = Target(
        gateway_url=opt.gateway_url,
        gateway_key=opt.gateway_key or os.environ.get(KEY_ENV) or None,
        models=models,
        features=frozenset(opt.feature),
        upstream_mode=opt.upstream,
        replay_url=replay_url,
        rule_timeout=opt.rule_timeout,
        strict=opt.gc_strict,
        repeat=opt.repeat,
        keepalive_silence=opt.keepalive_silence,
        nonstream_timeout=opt.nonstream_timeout,
        allow_large_requests=bool(opt.allow_large_requests),
    )
    state = SessionState(
        target=target,
        profile=profile,
        rule_patterns=list(opt.rule),
        rerun_base=_rerun_base(config),
        replay_server=server,
        expectations=expectations,
    )
    if not _is_worker(config):
        try:
            _probe(replay_url, opt.gateway_url, target.gateway_key, profile.base_path)
        except pytest.UsageError:
            state.close()
            raise
    state.specs_root = root
    config.stash[STATE_KEY] = state
    config.pluginmanager.register(ConformanceRun(state), "gateway-conformance-run")


def _check_options(opt: Any, root: Path) -> Profile:
    """The options that need no I/O beyond reading the profile: a UsageError (exit 3) for each mistake."""
    from harness.spec import SpecError, load_profile

    if not opt.profile:
        raise pytest.UsageError(
            "--gateway-url needs --profile NAME (which gateway's documented rules to run)"
        )
    if opt.specs_dir and not root.is_dir():
        raise pytest.UsageError(f"--specs-dir {opt.specs_dir}: no such directory")
    try:
        profile = load_profile(opt.profile, root)
    except SpecError as exc:
        raise pytest.UsageError(f"--profile {opt.profile}: {exc.problem}") from exc
    if not opt.gateway_url.startswith(("http://", "https://")):
        raise pytest.UsageError(f"--gateway-url {opt.gateway_url!r}: expected an http(s) URL")
    if opt.rule_timeout <= 0:
        raise pytest.UsageError("--rule-timeout must be positive")
    if opt.repeat < 1 or (opt.max_requests is not None and opt.max_requests < 0):
        raise pytest.UsageError("--repeat must be at least 1 and --max-requests not negative")
    if (opt.repeat != 1 or opt.max_requests is not None) and opt.upstream != "live":
        raise pytest.UsageError("--repeat and --max-requests apply to --upstream live only")
    return profile


def _load_expectations(path: str | None, profile: str) -> Any:
    if not path:
        return None
    from harness.expectations import ExpectationsError, load_expectations

    try:
        return load_expectations(Path(path), profile)
    except ExpectationsError as exc:
        raise pytest.UsageError(f"--expectations: {exc}") from exc


def _probe(replay_url: str | None, gateway_url: str, key: str | None, base_path: str | None) -> None:
    """Before any rule: the replay upstream answers, and the preflight finds the gateway (exit 3 if not)."""
    from harness.preflight import PreflightError, preflight
    from harness.replay.client import ReplayClient, ReplayError

    if replay_url:
        probe = ReplayClient(replay_url)
        try:
            probe.health()
        except ReplayError as exc:
            raise pytest.UsageError(f"replay upstream at {replay_url} does not answer: {exc}") from exc
        finally:
            probe.close()
    try:
        preflight(gateway_url, key, base_path)
    except PreflightError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _check_selection(config: pytest.Config, profile: str) -> None:
    """An empty selection is bad configuration: exit 3 naming the patterns, before anything starts."""
    from harness.collection import CatalogError, check_catalog
    from harness.selection import EmptySelection, check_selection, profile_rules

    paths = [Path(a.split("::")[0]) for a in config.args]
    rules = profile_rules([p for p in paths if p.exists()], profile)
    if rules is None:  # a rule file that does not load is bad configuration (exit 3), every problem named
        try:
            check_catalog([p for p in paths if p.exists()])
        except CatalogError as exc:
            raise pytest.UsageError(*exc.lines()) from exc
    if rules is None or not all(Path(a).exists() for a in config.args):  # node ids or -k: pytest selects
        return
    try:
        check_selection(rules, config.option.rule, profile)
    except EmptySelection as exc:
        raise pytest.UsageError(str(exc)) from exc


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.pluginmanager.get_plugin("gateway-conformance-run")
    if run is not None:
        run.state.close()


class ConformanceRun:
    """Hooks that exist only while a conformance run is active."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.collection_errors = 0  # every collector that failed, whatever else collected

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors += 1

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> SpecFile | None:
        from harness.items import SpecFile
        from harness.spec.loader import NON_RULE_FILES

        if file_path.suffix not in (".yaml", ".yml") or file_path.name in NON_RULE_FILES:
            return None
        if SKIP_DIRS & set(file_path.parts):
            return None
        return SpecFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.state.target.upstream_mode == "live":
            from harness.live_plugin import guard_cost

            guard_cost(self.state, config, items)
        if self.state.expectations is None:
            return
        from datetime import datetime, timezone

        from harness.items import ExpectationsCheck
        from harness.paths import specs_root
        from harness.spec import load_rule_file, rule_files

        root = self.state.specs_root or specs_root()
        catalog = [
            r.id for path in rule_files(root / self.state.profile.name) for r in load_rule_file(path).rules
        ]
        catalog += [item.rule.id for item in items if hasattr(item, "rule")]  # rules from user-given paths
        problems = self.state.expectations.stale(catalog, datetime.now(timezone.utc).date())
        self.state.expectation_problems = problems
        if problems:
            items.append(ExpectationsCheck.from_parent(session, name="expectations-file", problems=problems))

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.state.target.upstream_mode == "live" and not _is_worker(session.config):
            from harness.live_plugin import announce

            announce(self.state, session.config)

    def pytest_configure_node(self, node: Any) -> None:  # xdist: hand the replay URL to workers
        node.workerinput["gc_replay_url"] = self.state.target.replay_url

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, Any]:
        from harness.items import RuleItem

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
            from harness.live_plugin import live_pass_status

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
        each one's reason here, always (a run that could not judge a rule must say why)."""
        if self.state.target.upstream_mode == "live" and not _is_worker(terminalreporter.config):
            from harness.live_plugin import live_terminal_summary

            live_terminal_summary(report_document(self.state, self.collection_errors), terminalreporter)
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
        if _is_worker(config):
            return
        if config.option.write_expectations:
            import yaml

            from harness.expectations import from_failures

            document = from_failures(
                self.state.profile.name, self.state.results, self.state.target.gateway_url
            )
            Path(config.option.write_expectations).write_text(
                yaml.safe_dump(document, sort_keys=False), encoding="utf-8"
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
    )


def write_report(path: Path, state: SessionState, collection_errors: int = 0) -> None:
    from harness.report.document import write_document

    write_document(path, report_document(state, collection_errors))
