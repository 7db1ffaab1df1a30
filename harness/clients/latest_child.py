"""In a scratch environment of the newest releases (latest.py): one Python client's driver, {versions, jobs} as JSON
on stdin, {versions, observations} on stdout, as drivers/child.py runs an isolated one."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from harness.clients.drivers.child import MODULES, _version, job_from_json


def _driver(client: str) -> Any:
    from harness.clients.drivers.python import PYTHON_CLIENTS

    for driver in PYTHON_CLIENTS:
        if driver.id == client:
            return driver
    return importlib.import_module(MODULES[client]).DRIVER


def main() -> int:
    payload = json.loads(sys.stdin.read())
    out: dict[str, Any] = {"versions": {p: _version(p) for p in payload.get("versions") or []}}
    if "jobs" in payload:
        driver = _driver(sys.argv[1])
        out["observations"] = [
            o.as_json() for o in driver.run_all([job_from_json(j) for j in payload["jobs"]])
        ]
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
