"""The pytest11 entry point: `pytest --gateway-url URL --profile NAME` runs a profile's rules.

Without `--gateway-url` this plugin only adds its options: it collects nothing and changes nothing,
so installing the package never disturbs another project's pytest run. Kept light for that reason (pytest
imports it in every project that installs the package): a run's work is in the modules beside it.

    configure.py  a run set up from its options (checked, servers found or started, the gateway probed)
    state.py      the run's per-process state and its stash key
    session.py    the hooks of an active run (collection, outcome words, the results file)
    items.py      rule files and rule variants as pytest items
    live.py       live mode's glue: the cost plan printed, `--max-requests` applied to the items
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any

import pytest

from harness.orchestrate.options import plugin_options
from harness.outcomes import EXIT_CONFIG


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gateway-conformance", "gateway conformance (OpenAI-compatible gateways)")
    for flags, kwargs in plugin_options():
        group.addoption(*flags, **kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, Any, Any]:
    """A conformance run's bad configuration exits 3, as every gateway-conformance command does (pytest's
    own usage errors, found before this hook, keep its 4); a gateway that does not answer its API at all, 2; a run
    stopped by SIGINT or SIGTERM, 130 or 143 (its results so far written, marked interrupted)."""
    if not config.getoption("gateway_url", None):
        return (yield)
    try:
        code = yield
    except pytest.UsageError as exc:
        from _pytest.config import print_usage_error

        print_usage_error(exc, file=sys.stderr)
        return getattr(exc, "gc_exit", EXIT_CONFIG)
    if code == pytest.ExitCode.INTERRUPTED:  # by a signal: 128 + its number, as a shell says (130, 143)
        from harness.orchestrate.processes import received

        signum = received()
        return 128 + signum if signum else code
    return code


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("gateway_url", None):
        return
    from harness.plugin.configure import configure

    configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.pluginmanager.get_plugin("gateway-conformance-run")
    if run is not None:
        run.state.close()
