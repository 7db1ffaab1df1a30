"""Clients that move (issue 46, 2): `clients --latest` runs the scenarios on the newest release of each library
beside the pinned run and says which scenario changed with which upgrade; `clients-matrix` builds the client x
gateway x version grid from stored runs (tests/fixtures/client-runs/: openai-python and openai-node through the
embedded reference gateway, pinned and newest, as `clients --latest` stored them)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as cli_main
from harness.clients.drivers import all_drivers
from harness.clients.drivers.isolated import IsolatedDriver
from harness.clients.drivers.node import NodeDriver
from harness.clients.latest import LatestPython, clients_extra, latest_drivers, upgrades, upgrades_markdown
from harness.clients.matrix import cells, client_documents, matrix_markdown

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "client-runs" / "openai-ezat-latest"


def _load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def test_the_newest_releases_are_resolved_unpinned_in_scratch_environments() -> None:
    extra = clients_extra()
    assert "openai" in extra and "pydantic-ai-slim[openai]" in extra and not any("==" in r for r in extra)
    drivers = all_drivers()
    latest = {d.id: d for d in latest_drivers(drivers)}
    assert isinstance(latest["openai-python"], LatestPython) and latest["openai-python"].env == "py"
    assert set(extra) <= set(latest["openai-python"].requirements)
    isolated = next(d for d in drivers if isinstance(d, IsolatedDriver))
    assert latest[isolated.id].env == f"py-{isolated.id}"  # what cannot share an environment gets its own
    assert isinstance(latest["claude-code"], NodeDriver) and isinstance(latest["codex"], NodeDriver)
    # What a library cannot be asked (a driver's `cannot`) it cannot be asked on its newest release either: a
    # first run of every client had the WebSocket clients' rate-limit-retry NOT_APPLICABLE pinned and FAIL newest.
    for pinned in drivers:
        for scenario in ("rate-limit-retry", "tool-round-trip", "mid-stream-error"):
            said = getattr(pinned, "cannot", lambda _s: None)(scenario)
            assert getattr(latest[pinned.id], "cannot", lambda _s: None)(scenario) == said


def test_each_version_is_named_and_what_changed_with_the_upgrade_is_said() -> None:
    pinned, newest = _load(RUN / "openai" / "results.json"), _load(RUN / "latest" / "openai" / "results.json")
    rows = upgrades([pinned], [newest])
    python = next(r for r in rows if r["client"] == "openai-python")
    assert python["pinned"] == {"openai": "3.57.0"} and python["newest"] == {"openai": "3.63.0"}
    assert python["verdicts"] == ("READY", "READY") and python["changed"] == []
    broken = copy.deepcopy(newest)
    for r in broken["results"]:
        if r["rule_id"] == "clients/openai-node/stream-usage":
            r["outcome"] = "FAIL"
            r["violations"] = [{"check": "clients.usage", "path": "$", "expected": None, "actual": None,
                                "message": "the library's usage is None"}]  # fmt: skip
    node = next(r for r in upgrades([pinned], [broken]) if r["client"] == "openai-node")
    assert node["verdicts"] == ("READY", "LIMITED")
    assert node["changed"] == [
        {"scenario": "stream-usage", "pinned": "PASS", "newest": "FAIL", "why": "the library's usage is None"}
    ]
    md = upgrades_markdown(upgrades([pinned], [broken]))
    assert "| openai | reference gateway (embedded) | openai-node | openai 7.55.0 → 7.60.0, zod 4.6.7 |" in md
    assert "stream-usage: PASS → FAIL the library's usage is None" in md


def test_the_matrix_is_generated_from_stored_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    documents = client_documents([RUN])
    assert len(documents) == 2  # pinned and newest
    grid = cells(documents)
    gateway = "reference gateway (embedded) (openai)"
    assert grid[("openai", "openai-python", "openai 3.57.0")][gateway] == "✅ READY"
    assert grid[("openai", "openai-python", "openai 3.63.0")][gateway] == "✅ READY"
    newest = next(d for d in documents if d["clients"]["openai-python"]["versions"]["openai"] == "3.63.0")
    failing = copy.deepcopy(newest)
    failing["target"]["description"] = "acme-gateway 2.4"
    for r in failing["results"]:
        if r["rule_id"] == "clients/openai-python/mid-stream-error":
            r["outcome"] = "FAIL"
            r["violations"] = [{"check": "clients.error", "path": "$", "expected": None, "actual": None,
                                "message": "the library returned instead of raising a any error (text 'Hello from ')"}]  # fmt: skip
    md = matrix_markdown([*documents, failing])
    assert "| client | version | reference gateway (embedded) (openai) | acme-gateway 2.4 (openai) |" in md
    assert ("| openai-python | openai 3.63.0 | ✅ READY | ⚠️ LIMITED<br>mid-stream-error: the library returned "
            "instead of raising a any error (text 'Hello from ') |") in md  # fmt: skip
    assert cli_main(["clients-matrix", str(RUN), "--out", str(tmp_path / "matrix.md")]) == 0
    assert (tmp_path / "matrix.md").read_text(encoding="utf-8").startswith("# Client matrix")
    assert cli_main(["clients-matrix", str(tmp_path / "none")]) == 3


@pytest.mark.e2e
def test_clients_latest_names_the_versions_it_resolved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli_main(["clients", "--profile", "openai", "--client", "openai-python", "--scenario", "text", "--latest",
                     "--report-dir", str(tmp_path / "r")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "the newest releases beside the pinned ones" in out and "openai 3.57.0" in out
    rows = json.loads((tmp_path / "r" / "upgrades.json").read_text(encoding="utf-8"))
    assert rows[0]["client"] == "openai-python" and rows[0]["newest"]["openai"] not in ("", "not installed")
