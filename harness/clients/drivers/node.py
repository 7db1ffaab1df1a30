"""The Node clients (openai-node, ai-sdk, langchain-js): harness/clients/node/driver.mjs in one `node`
process per client and profile, the libraries installed from the lock file into a cache folder on first use.

The cache folder is ~/.cache/gateway-conformance/node-clients (GC_NODE_CLIENTS_DIR overrides it); `npm ci`
runs there when its lock file differs from the one shipped. Without node and npm the clients are skipped,
with a line that says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.clients.observation import Job, Observation, observation_from_json
from harness.errors import HarnessFailure

NODE_CLIENTS: tuple[str, ...] = (
    "openai-node",
    "ai-sdk",
    "langchain-js",
    "anthropic-node",
    "claude-code",
    "openai-node-responses",
    "ai-sdk-responses",
    "openai-agents-node",
    "codex",
    "codex-ws",
)
SOURCE = Path(__file__).resolve().parent.parent / "node"
SHIPPED = ("package.json", "package-lock.json", "driver.mjs")
PACKAGES = {
    "openai-node": ("openai", "zod"),
    "openai-node-responses": ("openai", "zod"),
    "ai-sdk-responses": ("ai", "@ai-sdk/openai"),
    "openai-agents-node": ("@openai/agents", "openai", "zod"),
    "ai-sdk": ("ai", "@ai-sdk/openai-compatible"),
    "langchain-js": ("@langchain/openai", "@langchain/core", "openai"),
    "anthropic-node": ("@anthropic-ai/sdk",),
    "claude-code": ("@anthropic-ai/claude-code",),
    "codex": ("@openai/codex",),
    "codex-ws": ("@openai/codex",),
}
# Scenarios a client cannot be asked to do, with why (the runner marks them NOT_APPLICABLE for that client).
_OWN_TOOLS = (
    "Claude Code's tools are its own (Bash, Read, …): an application cannot declare function tools to it"
)
_CODEX_TOOLS = "Codex's tools are its own (exec_command, apply_patch, …): an application cannot declare function tools to it"
CANNOT: dict[str, dict[str, str]] = {
    "codex": {
        "tool-round-trip": _CODEX_TOOLS,
        "parallel-tools-stream": _CODEX_TOOLS,
    },
    "codex-ws": {
        "tool-round-trip": _CODEX_TOOLS,
        "parallel-tools-stream": _CODEX_TOOLS,
        # codex-rs/codex-api/src/endpoint/responses_websocket.rs (map_wrapped_websocket_error_event): an in-band
        # error event with status 429 becomes an HTTP 429 transport error, which the turn reports as "exceeded retry
        # limit" without resending it (the HTTP transport is where Codex retries a 429).
        "rate-limit-retry": "Codex does not resend a turn refused in-band with 429 on its WebSocket (it retries a 429 on HTTP only)",
    },
    "claude-code": {
        "tool-round-trip": _OWN_TOOLS,
        "parallel-tools-stream": _OWN_TOOLS,
        "structured-output": "claude -p has no structured-output request (its answer is the model's text)",
        # Seen with 2.1.332: after the stream's error event it sends the request again (CLAUDE_CODE_MAX_RETRIES=0
        # notwithstanding) and reports that second answer's error, so the scenario's one scripted answer is not
        # what it ends on.
        "mid-stream-error": "claude -p re-sends a request whose stream failed mid-way; the scenario scripts one answer",
    },
}
RUN_TIMEOUT = 300.0


def cache_dir() -> Path:
    given = os.environ.get("GC_NODE_CLIENTS_DIR")
    return Path(given) if given else Path.home() / ".cache" / "gateway-conformance" / "node-clients"


def node_missing() -> str | None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        return (
            f"{' and '.join(missing)} not found on PATH: the Node clients are skipped (install Node.js 20+)"
        )
    return None


def ensure_installed(target: Path | None = None) -> Path:
    """The cache folder with the shipped lock file's packages installed (npm ci, only when it changed)."""
    where = target or cache_dir()
    where.mkdir(parents=True, exist_ok=True)
    lock = (SOURCE / "package-lock.json").read_bytes()
    installed = where / "node_modules" / ".gc-lock"
    for name in SHIPPED:
        shutil.copyfile(SOURCE / name, where / name)
    if installed.is_file() and installed.read_bytes() == lock:
        return where
    print(
        f"clients: installing the Node client libraries from the lock file into {where} (npm ci; once)",
        file=sys.stderr,
        flush=True,
    )
    proc = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=where,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if proc.returncode != 0:
        tail = " … ".join(proc.stderr.strip().splitlines()[-3:])
        raise HarnessFailure(f"npm ci in {where} failed (exit {proc.returncode}): {tail}")
    installed.write_bytes(lock)
    return where


@dataclass(frozen=True)
class NodeDriver:
    id: str
    language: str = "node"

    def versions(self) -> dict[str, str]:
        out = {}
        for name in PACKAGES[self.id]:
            path = cache_dir() / "node_modules" / name / "package.json"
            try:
                out[name] = str(json.loads(path.read_text(encoding="utf-8"))["version"])
            except (OSError, ValueError, KeyError):
                out[name] = _locked_version(name)
        return out

    def missing(self) -> str | None:
        return node_missing()

    def cannot(self, scenario: str) -> str | None:
        """Why this client cannot be asked to do `scenario`, or None."""
        return CANNOT.get(self.id, {}).get(scenario)

    def run_all(self, jobs: Sequence[Job]) -> list[Observation]:
        where = ensure_installed()
        payload = json.dumps({"client": self.id, "jobs": [j.as_json() for j in jobs]})
        try:
            proc = subprocess.run(
                ["node", str(where / "driver.mjs")],
                input=payload,
                capture_output=True,
                text=True,
                cwd=where,
                check=False,
                timeout=RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired as exc:
            raise HarnessFailure(
                f"{self.id}: the Node driver did not finish within {RUN_TIMEOUT:g}s"
            ) from exc
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            tail = " … ".join(proc.stderr.strip().splitlines()[-4:])
            raise HarnessFailure(f"{self.id}: the Node driver failed (exit {proc.returncode}): {tail}")
        data: dict[str, Any] = json.loads(lines[-1])
        observations = [observation_from_json(o) for o in data["observations"]]
        if len(observations) != len(jobs):
            raise HarnessFailure(f"{self.id}: {len(observations)} observations for {len(jobs)} jobs")
        return observations


def _locked_version(name: str) -> str:
    try:
        lock = json.loads((SOURCE / "package-lock.json").read_text(encoding="utf-8"))
        return str(lock["packages"][f"node_modules/{name}"]["version"])
    except (OSError, ValueError, KeyError):
        return "unknown"
