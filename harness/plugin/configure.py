"""A conformance run set up from its options (pytest_configure): the options checked, the model map and
expectations loaded, the replay upstream served or found, the gateway probed, the session's hooks registered.
Bad configuration is a pytest.UsageError: exit 3 with its one line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.outcomes import KEY_ENV
from harness.plugin.state import SessionState, is_worker

if TYPE_CHECKING:
    from harness.spec import Profile


def configure(config: pytest.Config) -> None:
    if not config.getoption("gateway_url", None):
        return
    from harness.engine.target import Target
    from harness.orchestrate.config import RunConfig
    from harness.paths import specs_root
    from harness.plugin.session import ConformanceRun
    from harness.plugin.state import STATE_KEY

    opt = config.option
    root = specs_root(opt.specs_dir)
    profile = _check_options(opt, root)
    _check_features(opt.feature, profile)
    setup = _load_setup(opt.implementation, opt.feature)
    models = _load_model_map(opt.model_map, profile)
    expectations = _load_expectations(opt.expectations, profile.name)
    # Run the profile's catalog unless the user named paths (e.g. a folder of their own rules).
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args = [str(root / profile.name)]
    if not is_worker(config):
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
        surface=profile.surface,
        setup=setup,
    )
    state = SessionState(
        target=target,
        profile=profile,
        rule_patterns=list(opt.rule),
        rerun_base=_rerun_base(config),
        replay_server=server,
        expectations=expectations,
        # xdist's workers each run their share one rule at a time: the workers are the concurrency there.
        workers=1 if is_worker(config) else RunConfig.from_options(opt).workers(),
    )
    if not is_worker(config):
        try:
            _probe(
                replay_url,
                opt.gateway_url,
                target.gateway_key,
                profile,
                opt.rule_timeout,
                models,
                opt.upstream,
            )
        except pytest.UsageError:
            state.close()
            raise
    state.specs_root = root
    if not is_worker(config):  # SIGTERM as Ctrl-C: the results judged so far are written, marked interrupted
        from harness.orchestrate.processes import handle_signals

        state.signals = handle_signals()
    config.stash[STATE_KEY] = state
    config.pluginmanager.register(ConformanceRun(state), "gateway-conformance-run")


def _load_model_map(path: str | None, profile: Profile) -> dict[str, str | None]:
    from harness.errors import ModelMapError
    from harness.modelmap import load_model_map

    try:
        return load_model_map(path, profile)
    except ModelMapError as exc:
        raise pytest.UsageError(str(exc)) from exc


def _load_setup(path: str | None, features: list[str]) -> Any:
    """The claimed features' set-up (--implementation FILE's `features:`); a claimed feature without it is bad
    configuration, never a guess (harness/featuresetup.py)."""
    from harness.errors import ConfigError
    from harness.featuresetup import load_feature_setup

    try:
        setup = load_feature_setup(path)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from exc
    problems = setup.missing_for(features)
    if problems:
        raise pytest.UsageError("; ".join(problems))
    return setup


def _rerun_base(config: pytest.Config) -> str:
    from harness.orchestrate.config import RunConfig

    return RunConfig.from_options(config.option).pytest_rerun()


def _start_replay(config: pytest.Config) -> tuple[str | None, Any]:
    """The replay upstream URL: given, served here, or handed down by the xdist controller."""
    opt = config.option
    if opt.upstream == "live":
        return None, None  # live mode never contacts a replay upstream (the provider is not scripted)
    if is_worker(config):
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
    from harness.replay.server import ReplayServer

    try:
        server = ReplayServer(cassettes_dir(), port=opt.replay_port)
        server.start()
    except OSError as exc:
        raise pytest.UsageError(
            f"--replay-port {opt.replay_port}: cannot serve the replay upstream: {exc}"
        ) from exc
    return server.url, server


def _check_options(opt: Any, root: Path) -> Profile:
    """The options that need no I/O beyond reading the profile: a UsageError (exit 3) for each mistake."""
    from harness.errors import ConfigError, SpecError
    from harness.orchestrate.config import RunConfig
    from harness.spec import load_profile

    if not opt.profile:
        raise pytest.UsageError(
            "--gateway-url needs --profile NAME (which gateway's documented rules to run)"
        )
    try:  # the checks certify makes too: one RunConfig owns them
        RunConfig.from_options(opt).check()
        # pytest's own report, written at the end: probed now too (issue 48)
        if getattr(opt, "xmlpath", None):
            from harness.report.folder import writable_file

            writable_file(opt.xmlpath, "--junitxml")
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from exc
    try:
        profile = load_profile(opt.profile, root)
    except SpecError as exc:
        raise pytest.UsageError(f"--profile {opt.profile}: {exc.problem}") from exc
    return profile


def _load_expectations(path: str | None, profile: str) -> Any:
    if not path:
        return None
    from harness.errors import ExpectationsError
    from harness.expectations import load_expectations

    try:
        return load_expectations(Path(path), profile)
    except ExpectationsError as exc:
        raise pytest.UsageError(f"--expectations: {exc}") from exc


def _probe(
    replay_url: str | None,
    gateway_url: str,
    key: str | None,
    profile: Profile,
    rule_timeout: float,
    models: dict[str, str | None],
    upstream: str,
) -> None:
    """Before any rule: the replay upstream answers, and the preflight finds the gateway (exit 3 if not; exit 2 when
    it does not answer its API at all), waiting no longer than a rule would (--rule-timeout, when it is under the
    preflight's own 10 s); live, the gateway serves the model the rules name (exit 3 before any budget is spent)."""
    from harness.errors import GatewayUnavailable, PreflightError, ReplayError
    from harness.orchestrate.preflight import TIMEOUT, check_model, preflight
    from harness.outcomes import EXIT_HARNESS
    from harness.replay.client import ReplayClient
    from harness.surfaces import surface

    if replay_url:
        probe = ReplayClient(replay_url)
        try:
            probe.health()
        except ReplayError as exc:
            raise pytest.UsageError(f"replay upstream at {replay_url} does not answer: {exc}") from exc
        finally:
            probe.close()
    role = "MODEL" if "MODEL" in models else next(iter(models), None)
    model = models.get(role) if role else None
    inbound = surface(profile.surface)
    try:
        preflight(gateway_url, key, profile.base_path, min(TIMEOUT, rule_timeout), inbound, model)
        if upstream == "live" and role and model:
            check_model(gateway_url, key, model, role, profile.name, inbound, rule_timeout)
    except PreflightError as exc:
        raise pytest.UsageError(str(exc)) from exc
    except GatewayUnavailable as exc:  # an outage: exit 2, not 3 (pytest_cmdline_main reads the mark)
        error = pytest.UsageError(str(exc))
        error.gc_exit = EXIT_HARNESS  # type: ignore[attr-defined]
        raise error from exc


# Features every profile may be run with: the harness's own (the file server on loopback, the slow rules).
HARNESS_FEATURES = frozenset({"loopback-downloads", "slow"})


def _check_features(given: list[str], profile: Any) -> None:
    """A --feature the profile does not define is a typo, not a claim that judges nothing: exit 3, with the
    closest names (issue 34)."""
    from harness.names import closest

    known = sorted(set(profile.features) | HARNESS_FEATURES)
    for name in given:
        if name not in known:
            hint = closest(name, known)
            raise pytest.UsageError(
                f"--feature {name!r} is not a feature of profile {profile.name}: {hint}its features: {', '.join(known)}"
            )


def _check_selection(config: pytest.Config, profile: str) -> None:
    """An empty selection is bad configuration: exit 3 naming the patterns, before anything starts."""
    from harness.errors import EmptySelection, RuleCatalogError
    from harness.spec.collection import check_catalog
    from harness.spec.selection import check_selection, profile_rules

    paths = [Path(a.split("::")[0]) for a in config.args]
    rules = profile_rules([p for p in paths if p.exists()], profile)
    if rules is None:  # a rule file that does not load is bad configuration (exit 3), every problem named
        try:
            check_catalog([p for p in paths if p.exists()])
        except RuleCatalogError as exc:
            raise pytest.UsageError(*exc.lines()) from exc
    if rules is None or not all(Path(a).exists() for a in config.args):  # node ids or -k: pytest selects
        return
    try:
        check_selection(rules, config.option.rule, profile)
    except EmptySelection as exc:
        raise pytest.UsageError(str(exc)) from exc
