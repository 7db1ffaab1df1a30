"""`clients --latest`: the same scenarios driven by the newest release of each client library, beside the pinned
run, each version named, and which scenario changed with which upgrade.

Python clients: one scratch virtual environment (`~/.cache/gateway-conformance/latest/py`, `$GC_CACHE_DIR`) made
with `pip install --upgrade` of every Python client's distributions, unpinned, so pip resolves the newest releases
that install together; instructor and llama-index (which cannot share it, drivers/isolated.py) each get their own.
Each run upgrades them again. Node clients (the SDKs, the AI SDK, LangChain.js, Claude Code, Codex): the shipped
package.json with every dependency at `latest`, `npm install`ed (no lock file) into `latest/node-clients`, and the
usual Node driver run there. The pinned run is the verdict of record; the newest releases are what an application
that upgrades tomorrow meets.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.clients.drivers.base import Driver, PythonDriver
from harness.clients.drivers.isolated import IsolatedDriver, child_json, child_observations
from harness.clients.drivers.node import SOURCE, NodeDriver
from harness.clients.observation import Job, Observation
from harness.errors import HarnessFailure
from harness.paths import cache_dir

RUN_TIMEOUT = 300.0
_UPGRADED: set[Path] = set()  # environments upgraded in this process: once a run


def root() -> Path:
    return cache_dir("latest")


def _python(where: Path) -> Path:
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def clients_extra() -> list[str]:
    """The `[clients]` extra's requirements without their pins (`pydantic-ai-slim[openai]`, …)."""
    from packaging.requirements import Requirement

    out = []
    for text in importlib.metadata.requires("gateway-conformance") or []:
        req = Requirement(text)
        if req.marker is not None and req.marker.evaluate({"extra": "clients"}):
            out.append(req.name + (f"[{','.join(sorted(req.extras))}]" if req.extras else ""))
    return out


@dataclass(frozen=True)
class LatestPython:
    """A Python client run with the newest releases, in `root()/<env>` (the driver as `latest_child.py`)."""

    id: str
    packages: tuple[str, ...]  # the distributions whose versions are named
    env: str
    requirements: tuple[str, ...]  # what pip installs, unpinned
    pinned: Any = (
        None  # the pinned driver: what it cannot be asked, it cannot be asked on a newer release either
    )
    language: str = "python"

    def cannot(self, scenario: str) -> str | None:
        """What the pinned driver says the library cannot be asked (drivers' `cannot`), or None."""
        found: str | None = getattr(self.pinned, "cannot", lambda _s: None)(scenario)
        return found

    @property
    def where(self) -> Path:
        return root() / self.env

    def ensure(self) -> Path:
        if self.where in _UPGRADED:
            return self.where
        print(f"clients --latest: resolving the newest {', '.join(self.requirements)} into {self.where}",
              file=sys.stderr, flush=True)  # fmt: skip
        steps = []
        if not _python(self.where).is_file():
            steps.append([sys.executable, "-m", "venv", str(self.where)])
        steps.append([str(_python(self.where)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                      "--upgrade", "--upgrade-strategy", "eager", *self.requirements])  # fmt: skip
        for cmd in steps:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1200)
            if proc.returncode != 0:
                tail = " … ".join(proc.stderr.strip().splitlines()[-3:])
                raise HarnessFailure(
                    f"{self.id} (latest): {' '.join(cmd[3:6])} … failed (exit {proc.returncode}): {tail}"
                )
        _UPGRADED.add(self.where)
        return self.where

    def versions(self) -> dict[str, str]:
        self.ensure()
        return dict(self._child({"versions": list(self.packages)})["versions"])

    def missing(self) -> str | None:
        return None  # made on first use

    def run_all(self, jobs: Sequence[Job]) -> list[Observation]:
        self.ensure()
        return child_observations(self._child, f"{self.id} (latest)", self.packages, jobs)

    def _child(self, payload: dict[str, Any]) -> dict[str, Any]:
        return child_json(
            _python(self.where), "harness.clients.latest_child", self.id, payload, f"{self.id} (latest)"
        )


def latest_drivers(drivers: Sequence[Driver]) -> list[Driver]:
    """Each of `drivers` with the newest releases of its libraries."""
    shared = tuple(dict.fromkeys([*clients_extra(), *(p for d in drivers if isinstance(d, PythonDriver)
                                                       for p in d.packages)]))  # fmt: skip
    out: list[Driver] = []
    for d in drivers:
        if isinstance(d, PythonDriver):
            out.append(LatestPython(d.id, d.packages, "py", shared, d))
        elif isinstance(d, IsolatedDriver):
            out.append(LatestPython(d.id, d.packages, f"py-{d.id}", d.packages, d))
        else:
            out.append(d)  # a Node client: run in the latest folder (node_latest)
    return out


def prepare_node() -> Path:
    """`root()/node-clients` with every Node client's package at its newest release (npm install, no lock)."""
    where = root() / "node-clients"
    if where in _UPGRADED:
        return where
    where.mkdir(parents=True, exist_ok=True)
    package = json.loads((SOURCE / "package.json").read_text(encoding="utf-8"))
    package["dependencies"] = {name: "latest" for name in package.get("dependencies") or {}}
    (where / "package.json").write_text(json.dumps(package, indent=2) + "\n", encoding="utf-8")
    (where / "package-lock.json").unlink(missing_ok=True)
    print(
        f"clients --latest: resolving the newest Node clients into {where} (npm install)",
        file=sys.stderr,
        flush=True,
    )
    proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=where,
                          capture_output=True, text=True, check=False, timeout=1200)  # fmt: skip
    if proc.returncode != 0:
        tail = " … ".join(proc.stderr.strip().splitlines()[-3:])
        raise HarnessFailure(f"npm install (latest) in {where} failed (exit {proc.returncode}): {tail}")
    # The Node driver installs from the shipped lock file unless its stamp says this folder has it: say so, so that
    # it runs on these newest releases instead.
    shutil.copyfile(SOURCE / "package-lock.json", where / "node_modules" / ".gc-lock")
    _UPGRADED.add(where)
    return where


@contextlib.contextmanager
def node_latest(drivers: Sequence[Driver]) -> Iterator[None]:
    """While the latest run's Node clients run: the Node driver's folder is the latest one."""
    if not any(isinstance(d, NodeDriver) and not d.missing() for d in drivers):
        yield
        return
    where = prepare_node()
    before = os.environ.get("GC_NODE_CLIENTS_DIR")
    os.environ["GC_NODE_CLIENTS_DIR"] = str(where)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("GC_NODE_CLIENTS_DIR", None)
        else:
            os.environ["GC_NODE_CLIENTS_DIR"] = before


def upgrades(
    pinned: Sequence[Mapping[str, Any]], latest: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Per profile and client: its versions pinned and newest, its verdict with each, and each scenario whose outcome
    changed with the upgrade (with the newest release's first reason)."""
    from harness.clients.judge import client_verdict
    from harness.clients.table import outcomes

    rows = []
    for old, new in zip(pinned, latest, strict=True):
        before, after = outcomes(old), outcomes(new)
        reasons = {r["rule_id"]: (r["violations"][0]["message"] if r["violations"] else r.get("reason") or "")
                   for r in new["results"]}  # fmt: skip
        for client, row in before.items():
            now = after.get(client, {})
            changed = [
                {"scenario": s, "pinned": o, "newest": now[s], "why": " ".join(str(reasons.get(f"clients/{client}/{s}", "")).split())[:200]}
                for s, o in row.items()
                if now.get(s, o) != o
            ]  # fmt: skip
            rows.append({
                "profile": old["profile"]["name"], "gateway": old["target"].get("description", ""), "client": client,
                "pinned": (old.get("clients") or {}).get(client, {}).get("versions", {}),
                "newest": (new.get("clients") or {}).get(client, {}).get("versions", {}),
                "verdicts": (client_verdict(row), client_verdict(now)), "changed": changed,
            })  # fmt: skip
    return rows


def _versions(row: Mapping[str, Any]) -> str:
    old, new = row["pinned"], row["newest"]
    return ", ".join(
        f"{p} {old.get(p, '?')}" + (f" → {new[p]}" if new.get(p) not in (None, old.get(p)) else "")
        for p in dict.fromkeys([*old, *new])
    )


def upgrades_text(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = []
    for row in rows:
        pinned, newest = row["verdicts"]
        lines.append(f"  {row['profile']:<10} {row['client']:<24} {pinned} → {newest}   {_versions(row)}")
        for c in row["changed"]:
            lines.append(
                f"      {c['scenario']}: {c['pinned']} → {c['newest']}"
                + (f"  {c['why']}" if c["why"] else "")
            )
    return lines


def upgrades_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    out = ["# The newest releases beside the pinned ones", "",
           "| profile | gateway | client | versions (pinned → newest) | verdict pinned → newest | changed with the upgrade |",
           "|---|---|---|---|---|---|"]  # fmt: skip
    for row in rows:
        changed = "<br>".join(f"{c['scenario']}: {c['pinned']} → {c['newest']} {c['why']}".replace("|", "\\|")
                              for c in row["changed"]) or "—"  # fmt: skip
        out.append(f"| {row['profile']} | {row['gateway']} | {row['client']} | {_versions(row)} | "
                   f"{row['verdicts'][0]} → {row['verdicts'][1]} | {changed} |")  # fmt: skip
    return "\n".join(out) + "\n"
