"""The drivers against the embedded reference gateway (ezat) between the mutating proxies: with no mutant
every scenario passes; with a mutant that models a real bug, the scenario an application would trip on
fails — so each driver reports what its library really returned."""

from __future__ import annotations

import importlib.util
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.clients.bugs import mutable_gateway
from harness.clients.drivers import all_drivers
from harness.clients.drivers.isolated import IsolatedDriver
from harness.clients.drivers.node import cache_dir, node_missing
from harness.clients.orchestration import replay_upstream
from harness.clients.runner import ClientTarget, run_profile
from harness.clients.scenarios import load_scenarios
from harness.mutants.catalog import load_catalog
from harness.spec import load_profile

CATALOG = load_scenarios()
DRIVERS = {d.id: d for d in all_drivers()}
MUTANTS = {m.id: m for m in load_catalog().mutants}


def _node_ready() -> bool:
    # Tests never install (no registry): the Node clients run when `gateway-conformance clients` installed them.
    return node_missing() is None and (cache_dir() / "node_modules" / ".gc-lock").is_file()


def _runnable(client: str) -> Any:
    driver = DRIVERS[client]
    if isinstance(driver, IsolatedDriver) and not driver.installed():
        pytest.skip(f"{client}'s own environment is not made (run `gateway-conformance clients` once)")
    if driver.language == "node":
        if not _node_ready():
            pytest.skip("the Node clients are not installed (run `gateway-conformance clients` once)")
    elif driver.missing():
        pytest.skip(driver.missing() or "")
    return driver


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ClientTarget, Any]]:
    key = "gc-" + secrets.token_hex(8)
    profile = load_profile("ezat")
    log: Path = tmp_path_factory.mktemp("clients") / "gateway.log"
    with replay_upstream() as replay_url, mutable_gateway("ezat", replay_url, key, log) as (url, use):
        model = profile.models[CATALOG.profiles["ezat"].role].default
        yield (
            ClientTarget("ezat", profile.doc, profile.title, url, key, replay_url, model, "test", "rerun"),
            use,
        )


def _outcomes(document: dict[str, Any]) -> dict[str, str]:
    return {r["rule_id"].split("/", 2)[2]: r["outcome"] for r in document["results"]}


CLIENTS = [d.id for d in all_drivers()]


@pytest.mark.e2e
@pytest.mark.parametrize("client", CLIENTS)
def test_every_scenario_passes_through_the_reference_gateway(
    client: str, gateway: tuple[ClientTarget, Any]
) -> None:
    target, use = gateway
    use(None)
    document = run_profile(target, [_runnable(client)], CATALOG)
    # A scenario the client cannot be asked to do (claude-code declares no function tools) is NOT_APPLICABLE with
    # the client's own reason; everything else passes.
    cannot = getattr(DRIVERS[client], "cannot", lambda _s: None)
    failed = {
        r["rule_id"]: r["violations"] or r.get("reason")
        for r in document["results"]
        if r["outcome"] != "PASS"
        and not (r["outcome"] == "NOT_APPLICABLE" and cannot(r["rule_id"].split("/", 2)[2]) is not None)
    }
    assert not failed
    assert any(r["outcome"] == "PASS" for r in document["results"])
    assert document["clients"][client]["versions"]


# (mutant, client scenario that must fail): bugs an application would trip on, each seen by its library.
BUGS = [
    ("tools/parallel-all-index-zero", "parallel-tools-stream"),
    ("streaming/error-replaced-by-stop", "mid-stream-error"),
    ("usage/total-not-sum", "stream-usage"),
]


@pytest.mark.e2e
@pytest.mark.parametrize("client", ["openai-python", "langchain-python"])
@pytest.mark.parametrize(("mutant", "scenario"), BUGS, ids=[b[0] for b in BUGS])
def test_a_real_bug_fails_the_scenario_it_breaks(
    client: str, mutant: str, scenario: str, gateway: tuple[ClientTarget, Any]
) -> None:
    target, use = gateway
    driver = _runnable(client)
    one = type(CATALOG)(
        scenarios=(CATALOG.scenario(scenario), CATALOG.scenario("text")), profiles=CATALOG.profiles
    )
    use(MUTANTS[mutant])
    try:
        document = run_profile(target, [driver], one)
    finally:
        use(None)
    assert _outcomes(document) == {scenario: "FAIL", "text": "PASS"}
    failing = next(r for r in document["results"] if r["outcome"] == "FAIL")
    assert failing["exchange"]["upstream"], "a failure carries the exchange"


# The same for the clients of the Messages surface (profile anthropic; ezat passes /v1/messages through). Not every
# library trips on every bug: langchain-anthropic accumulates blocks by index and does not notice 1-based ones.
MESSAGES_BUGS = [
    (
        "anthropic-python",
        "anthropic/stream/events-unnamed",
        "stream-text",
    ),  # unnamed events are skipped: no text
    ("langchain-anthropic", "anthropic/stream/events-unnamed", "stream-text"),
    ("anthropic-python", "anthropic/stream/one-based-indexes", "parallel-tools-stream"),
    ("anthropic-python", "anthropic/stream/error-swallowed", "mid-stream-error"),
    ("langchain-anthropic", "anthropic/stream/error-swallowed", "mid-stream-error"),
    ("anthropic-python", "anthropic/usage/input-includes-cache", "stream-usage"),
]


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("client", "mutant", "scenario"), MESSAGES_BUGS, ids=[f"{b[0]}-{b[1]}" for b in MESSAGES_BUGS]
)
def test_a_real_messages_bug_fails_the_scenario_it_breaks(
    client: str, mutant: str, scenario: str, gateway: tuple[ClientTarget, Any]
) -> None:
    test_a_real_bug_fails_the_scenario_it_breaks(client, mutant, scenario, gateway)


def test_a_missing_library_is_a_skip_with_the_install_line() -> None:
    from harness.clients.drivers.base import PythonDriver, classify_openai

    ghost = PythonDriver(
        id="ghost", packages=("gc-no-such-dist",), module="gc_no_such_module", scenario=lambda j: None,  # type: ignore[arg-type,return-value]
        classify=classify_openai,
    )  # fmt: skip
    assert "pip install -e '.[clients]'" in (ghost.missing() or "")
    assert ghost.versions() == {"gc-no-such-dist": "not installed"}
    assert importlib.util.find_spec("gc_no_such_module") is None
