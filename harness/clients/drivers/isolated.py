"""Python clients that cannot share the harness's environment: each in its own virtual environment, made on
first use from a pinned requirements file (harness/clients/envs/<client>.txt) in a cache folder, the
driver run there as `python -m harness.clients.drivers.child <client>` (jobs as JSON in, observations out).

instructor 1.17.0 caps jiter below 0.15 while openai 3.x needs 0.16 or later; llama-index-llms-openai 0.8
needs openai below 3 while openai-agents and pydantic-ai need 3. So neither can be in the `[clients]` extra
beside the others; each gets the newest versions that install together, pinned in its file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.clients.observation import Job, Observation, observation_from_json
from harness.errors import HarnessFailure

ENVS = Path(__file__).resolve().parent.parent / "envs"
RUN_TIMEOUT = 300.0


def env_root() -> Path:
    given = os.environ.get("GC_PY_CLIENTS_DIR")
    return Path(given) if given else Path.home() / ".cache" / "gateway-conformance" / "py-clients"


def _python(where: Path) -> Path:
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@dataclass(frozen=True)
class IsolatedDriver:
    id: str
    packages: tuple[str, ...]
    language: str = "python"

    @property
    def requirements(self) -> Path:
        return ENVS / f"{self.id}.txt"

    @property
    def where(self) -> Path:
        return env_root() / self.id

    def installed(self) -> bool:
        stamp = self.where / ".gc-requirements"
        return stamp.is_file() and stamp.read_bytes() == self.requirements.read_bytes()

    def ensure(self) -> Path:
        if self.installed():
            return self.where
        print(
            f"clients: making {self.id}'s own environment in {self.where} from {self.requirements.name} (once)",
            file=sys.stderr,
            flush=True,
        )
        steps = [
            [sys.executable, "-m", "venv", "--clear", str(self.where)],
            # --no-deps: the file pins every package (a pip freeze), so nothing is left to resolve.
            [
                str(_python(self.where)),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "-r",
                str(self.requirements),
            ],
        ]
        for cmd in steps:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
            if proc.returncode != 0:
                tail = " … ".join(proc.stderr.strip().splitlines()[-3:])
                raise HarnessFailure(
                    f"{self.id}: {' '.join(cmd[-3:])} failed (exit {proc.returncode}): {tail}"
                )
        (self.where / ".gc-requirements").write_bytes(self.requirements.read_bytes())
        return self.where

    def versions(self) -> dict[str, str]:
        if not self.installed():
            return {p: "not installed" for p in self.packages}
        return dict(self._child({"versions": list(self.packages)})["versions"])

    def missing(self) -> str | None:
        return None  # made on first use

    def run_all(self, jobs: Sequence[Job]) -> list[Observation]:
        self.ensure()
        return child_observations(self._child, self.id, self.packages, jobs)

    def _child(self, payload: dict[str, Any]) -> dict[str, Any]:
        # Only the harness package on the path: the child imports nothing of it beyond the pure driver modules.
        return child_json(_python(self.where), "harness.clients.drivers.child", self.id, payload, self.id)


def child_json(python: Path, module: str, driver: str, payload: dict[str, Any], label: str) -> dict[str, Any]:
    """Run `python -m module driver` in a client's own environment with `payload` on stdin (only the harness package
    on its path) and read the last JSON line it prints; a timeout or a failed child is the harness's failure,
    named by `label`."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    try:
        proc = subprocess.run(
            [str(python), "-m", module, driver], input=json.dumps(payload), capture_output=True, text=True, env=env,
            check=False, timeout=RUN_TIMEOUT,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise HarnessFailure(f"{label}: its driver did not finish within {RUN_TIMEOUT:g}s") from exc
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = " … ".join(proc.stderr.strip().splitlines()[-4:])
        raise HarnessFailure(f"{label}: its driver failed (exit {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def child_observations(
    child: Any, label: str, packages: Sequence[str], jobs: Sequence[Job]
) -> list[Observation]:
    """The jobs run by a child driver (`child`: payload -> its JSON answer), one observation each."""
    data = child({"versions": list(packages), "jobs": [j.as_json() for j in jobs]})
    observations = [observation_from_json(o) for o in data["observations"]]
    if len(observations) != len(jobs):
        raise HarnessFailure(f"{label}: {len(observations)} observations for {len(jobs)} jobs")
    return observations


ISOLATED_CLIENTS: tuple[IsolatedDriver, ...] = (
    IsolatedDriver("instructor", ("instructor", "openai")),
    IsolatedDriver(
        "llama-index",
        ("llama-index-llms-openai-like", "llama-index-llms-openai", "llama-index-core", "openai"),
    ),
)
