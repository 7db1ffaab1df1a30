"""The package as PyPI would ship it (issue 46): a wheel built from this tree installs into a fresh virtual
environment and certifies the embedded reference gateway from there, its rules and cassettes read from inside the
wheel; and the GitHub Action's steps (action/certify.sh) install that wheel, start the replay upstream and a gateway,
certify it and stop them, as CI runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.orchestrate.embedded import free_port

ROOT = Path(__file__).resolve().parents[1]
KEY = "gc-packaging-key-0123"


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout)


@pytest.mark.e2e
def test_a_wheel_installs_in_a_fresh_venv_and_certifies_from_there(tmp_path: Path) -> None:
    built = _run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path / "dist")],
        ROOT,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("gateway_conformance-*.whl")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], tmp_path).returncode == 0
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    installed = _run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], tmp_path
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    neutral = tmp_path / "elsewhere"  # not the checkout: nothing of the tree is on the path
    neutral.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    where = _run(
        [str(python), "-c", "import harness.paths as p; print(p.specs_dir()); print(p.cassettes_dir())"],
        neutral,
        env,
    )
    assert where.stdout.split() == [
        str(
            venv
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
            / "harness"
            / "_data"
            / name
        )
        for name in ("specs", "cassettes")
    ]
    certified = _run([str(bin_dir / "gateway-conformance"), "certify", "--profile", "ezat", "--fuzz-examples", "20",
                      "--report-dir", "r"], neutral, env)  # fmt: skip
    assert certified.returncode == 0, certified.stdout[-3000:] + certified.stderr[-2000:]
    assert "verdict: all rules as expected" in certified.stdout
    assert (neutral / "r" / "ezat" / "junit.xml").is_file() and (
        neutral / "r" / "conformance-report.yaml"
    ).is_file()

    # The action's steps, as action.yml runs them, with this venv's Python and the wheel as the suite.
    port, replay_port = free_port(), free_port()
    action = {
        **env,
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_PYTHON": str(python),
        "INPUT_SUITE": str(wheel),
        "INPUT_REPLAY_PORT": str(replay_port),
        "INPUT_GATEWAY_COMMAND": f"reference-gateway --profile ezat --port {port} --upstream-url $GC_REPLAY_URL "
        f"--api-key {KEY} --log-level warning",
        "INPUT_GATEWAY_HEALTH_URL": f"http://127.0.0.1:{port}/healthz",
        "INPUT_GATEWAY_URL": f"http://127.0.0.1:{port}/openai/v1",
        "INPUT_PROFILE": "ezat",
        "INPUT_GATEWAY_KEY": KEY,
        "INPUT_EXPECTATIONS": "ci/known-failures.yaml",  # a first run: not there yet
        "INPUT_ARGS": "--rule ezat/response/* --rule ezat/finish/*",
        "INPUT_REPORT_DIR": "gc-report",
    }
    script = str(ROOT / "action" / "certify.sh")
    try:
        for step in ("install", "upstream", "gateway", "certify"):
            done = _run(["bash", script, step], neutral, action)
            assert done.returncode == 0, f"{step}: {done.stdout[-3000:]}{done.stderr[-2000:]}"
    finally:
        _run(["bash", script, "stop"], neutral, action)
    assert "::notice::no expectations file at ci/known-failures.yaml yet" in done.stdout
    assert (neutral / "gc-report" / "expectations-draft.yaml").is_file()
    assert (
        (tmp_path / "step-summary.md").read_text(encoding="utf-8").startswith("# gateway-conformance report")
    )
    assert "exit-code=0" in (tmp_path / "output").read_text(encoding="utf-8")
