"""Runs one isolated Python client's driver in its own environment (isolated.py): {versions, jobs} as JSON
on stdin, {versions, observations} on stdout. Imports only the standard library and the pure driver modules."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
from collections.abc import Mapping
from typing import Any

from harness.clients.observation import Job
from harness.clients.scenarios import Scenario, Tool

MODULES = {
    "instructor": "harness.clients.drivers.instructor_driver",
    "llama-index": "harness.clients.drivers.llama_index",
}


def job_from_json(data: Mapping[str, Any]) -> Job:
    obj = data.get("object") or {}
    scenario = Scenario(
        id=str(data["scenario"]),
        title=str(data["scenario"]),
        prompt="",
        upstream={},
        expect={},
        stream=bool(data.get("stream")),
        include_usage=bool(data.get("include_usage")),
        tools=tuple(
            Tool(t["name"], t.get("description") or "", t["parameters"]) for t in data.get("tools") or []
        ),
        tool_result=data.get("tool_result"),
        object_name=obj.get("name"),
        object_fields=dict(obj.get("fields") or {}),
        retries=int(data.get("retries") or 0),
    )
    return Job(
        scenario=scenario,
        base_url=data["base_url"],
        key=data["key"],
        model=data["model"],
        prompt=data["prompt"],
        headers=dict(data.get("headers") or {}),
    )


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def main() -> int:
    payload = json.loads(sys.stdin.read())
    out: dict[str, Any] = {"versions": {p: _version(p) for p in payload.get("versions") or []}}
    if "jobs" in payload:
        driver = importlib.import_module(MODULES[sys.argv[1]]).DRIVER
        jobs = [job_from_json(j) for j in payload["jobs"]]
        out["observations"] = [o.as_json() for o in driver.run_all(jobs)]
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
