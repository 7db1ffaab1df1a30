"""The GitHub Action's steps (action.yml runs action/certify.sh), run as CI runs them: INPUT_* variables, the job
summary and output files. A stand-in `gateway-conformance` records what certify was asked; the real thing runs
from a built wheel in tests/test_packaging.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "action" / "certify.sh"
STUB = """#!/usr/bin/env bash
printf '%s\\n' "$@" > "$GC_STUB_ARGS"
echo "key=$GC_GATEWAY_KEY" >> "$GC_STUB_ARGS"
dir=""; prev=""
for a in "$@"; do [ "$prev" = "--report-dir" ] && dir="$a"; [ "$prev" = "--write-expectations" ] && draft="$a"; prev="$a"; done
mkdir -p "$dir"; echo "# gateway-conformance report" > "$dir/summary.md"
[ -n "${draft:-}" ] && echo "expectations: []" > "$draft"
exit "${GC_STUB_EXIT:-0}"
"""


def _step(tmp_path: Path, step: str, exit_code: int = 0, **inputs: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "gateway-conformance"
    stub.write_text(STUB, encoding="utf-8")
    stub.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GC_STUB_ARGS": str(tmp_path / "args"),
        "GC_STUB_EXIT": str(exit_code),
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    return subprocess.run(
        ["bash", str(SCRIPT), step], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )


def test_a_first_run_without_expectations_or_baseline_certifies_and_drafts(tmp_path: Path) -> None:
    done = _step(tmp_path, "certify", gateway_url="http://127.0.0.1:8080/v1", profile="openai",
                 features="tools stream-usage", expectations="ci/known-failures.yaml", baseline="gc-baseline",
                 gateway_key="ci-key", report_dir="gc-report")  # fmt: skip
    assert done.returncode == 0, done.stderr
    args = (tmp_path / "args").read_text(encoding="utf-8").splitlines()
    assert args[:9] == ["certify", "--gateway-url", "http://127.0.0.1:8080/v1", "--profile", "openai",
                        "--replay-url", "http://127.0.0.1:9100", "--report-dir", "gc-report"]  # fmt: skip
    assert "--expectations" not in args and "--baseline" not in args
    assert args[args.index("--write-expectations") + 1].endswith("expectations-draft.yaml")
    assert [args[i + 1] for i, a in enumerate(args) if a == "--feature"] == ["tools", "stream-usage"]
    assert args[-1] == "key=ci-key"
    assert "::notice::no expectations file at ci/known-failures.yaml yet" in done.stdout
    assert "::notice::no baseline at gc-baseline yet" in done.stdout
    assert yaml.safe_load((tmp_path / "gc-report" / "expectations-draft.yaml").read_text(encoding="utf-8"))
    assert (tmp_path / "step-summary.md").read_text(encoding="utf-8") == "# gateway-conformance report\n"
    assert "exit-code=0" in (tmp_path / "output").read_text(encoding="utf-8")


def test_a_later_run_uses_them_and_its_exit_code_is_the_steps(tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "known-failures.yaml").write_text("expectations: []\n", encoding="utf-8")
    (tmp_path / "gc-baseline").mkdir()
    done = _step(tmp_path, "certify", 1, gateway_url="http://127.0.0.1:8080/v1", profile="ezat",
                 expectations="ci/known-failures.yaml", baseline="gc-baseline", model_map="ci/models.yaml",
                 args="--strict --rule 'ezat/*'", replay_port="9200")  # fmt: skip
    assert done.returncode == 1
    args = (tmp_path / "args").read_text(encoding="utf-8").splitlines()
    assert args[args.index("--expectations") + 1] == "ci/known-failures.yaml"
    assert args[args.index("--baseline") + 1] == "gc-baseline"
    assert args[args.index("--model-map") + 1] == "ci/models.yaml"
    assert "http://127.0.0.1:9200" in args and "--strict" in args
    assert "exit-code=1" in (tmp_path / "output").read_text(encoding="utf-8")


def test_the_action_runs_each_step_through_the_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    runs = [s.get("run", "") for s in action["runs"]["steps"]]
    steps = [r.split('certify.sh"')[1].strip() for r in runs if "certify.sh" in r]
    assert steps == ["install", "upstream", "gateway", "certify", "stop"]
    assert {"gateway-url", "profile", "expectations", "baseline"} <= set(action["inputs"])
    assert not action["inputs"]["expectations"].get("required")
