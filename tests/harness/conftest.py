"""Shared set-up of the harness tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _inner_runs_without_benchmark(request: pytest.FixtureRequest) -> None:
    """An inner pytester run under xdist would load pytest-benchmark where it is installed, which warns that
    xdist disables it (an error under filterwarnings=error): inner runs leave it out, as the project's own
    addopts do. A test that writes its own ini replaces this one."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini("[pytest]\naddopts = -p no:benchmark\n")
