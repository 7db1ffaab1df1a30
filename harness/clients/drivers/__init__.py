"""One small driver per client library: it drives a scenario through the library and reports what the
library returned or raised (harness.clients.observation). Python drivers run in this process, or, for a
library that cannot share its environment, in their own (isolated.py, child.py); the Node ones in one
`node` process per client (node.py, driver.mjs)."""

from __future__ import annotations

from harness.clients.drivers.base import Driver
from harness.clients.drivers.isolated import ISOLATED_CLIENTS
from harness.clients.drivers.node import NODE_CLIENTS, NodeDriver
from harness.clients.drivers.python import PYTHON_CLIENTS


def all_drivers() -> list[Driver]:
    """Every client, in the order of the report: the Python ones (in this environment, then each in its own),
    then the Node ones."""
    return [*PYTHON_CLIENTS, *ISOLATED_CLIENTS, *(NodeDriver(c) for c in NODE_CLIENTS)]


__all__ = ["Driver", "all_drivers"]
