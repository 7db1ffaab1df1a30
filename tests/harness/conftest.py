"""Shared set-up of the harness tests."""

from __future__ import annotations

from typing import Any

import httpcore  # noqa: F401
import httptools  # noqa: F401
import pytest
import uvicorn.protocols.http.httptools_impl
import uvicorn.protocols.websockets.auto  # noqa: F401
import yaml  # noqa: F401

# pytester's in-process runs remove from sys.modules what was first imported inside them. Two libraries break
# when imported again afterwards: PyYAML's C parser (libyaml) keeps the node classes of the first `yaml`
# ("could not determine a constructor for the tag None"), and httpx maps the httpcore exceptions of the first
# httpcore only (a refused connection escapes as httpcore.ConnectError); uvicorn's httptools protocol, loaded
# again, no longer catches the upgrade exception of the first httptools, so every later WebSocket upgrade is a
# dropped connection (the reference gateway's socket tests, after any inner run that served a gateway). Imported
# here, before any inner run, they are part of the baseline those runs restore.


@pytest.fixture(autouse=True)
def _inner_runs_without_benchmark(request: pytest.FixtureRequest) -> None:
    """An inner pytester run under xdist would load pytest-benchmark where it is installed, which warns that
    xdist disables it (an error under filterwarnings=error): inner runs leave it out, as the project's own
    addopts do. A test that writes its own ini replaces this one."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini("[pytest]\naddopts = -p no:benchmark\n")


@pytest.fixture
def read_only_dir(tmp_path: Any) -> Any:
    """A folder this process cannot write in (issue 48's read-only destinations): made read-only for a user; for root,
    whom no mode stops, /sys, where even root creates nothing."""
    import os
    from pathlib import Path

    if os.geteuid() == 0:
        yield Path("/sys")
        return
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)
