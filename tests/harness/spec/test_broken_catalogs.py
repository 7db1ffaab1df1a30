"""Issue 20 item 1: a rule file that does not load is bad configuration everywhere — exit 3, every problem of
every file named (file, rule id, key, "did you mean"), no report, and an honest `collection_errors`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import harness.paths
from harness.cli import main
from harness.outcomes import EXIT_CONFIG

ROOT = Path(__file__).resolve().parents[3]
SPECS = ROOT / "specs"


def _broken_catalog(base: Path, profiles: tuple[str, ...] = ("ezat",)) -> Path:
    """A copy of the bundled specs where ezat has two broken files: a wrong level and a misspelt key."""
    root = base / "specs"
    shutil.copytree(SPECS / "schema", root / "schema")
    for profile in profiles:
        shutil.copytree(SPECS / profile, root / profile)
    response = root / "ezat" / "response.yaml"
    response.write_text(response.read_text().replace("level: MUST", "level: MUSTT", 1))
    caching = root / "ezat" / "caching.yaml"
    caching.write_text(caching.read_text().replace("      upstream:\n", "      upstream_call:\n", 1))
    return root


def _assert_names_every_problem(text: str) -> None:
    assert "the rule catalog does not load (2 problem(s) in 2 file(s))" in text, text
    assert "response.yaml:" in text and "'MUSTT' is not one of" in text and "did you mean 'MUST'?" in text
    assert "caching.yaml:" in text and "rule ezat/caching/auto-breakpoint-system" in text
    assert "key 'upstream_call': unknown key (did you mean 'upstream_calls'?)" in text


@pytest.mark.e2e
def test_the_plugin_exits_3_naming_every_problem_of_every_file(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = _broken_catalog(tmp_path)
    report = tmp_path / "r.json"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--gateway-url", "http://127.0.0.1:9/v1", "--profile", "ezat",
        "--upstream", "live", "--specs-dir", str(root), "--report-json", str(report),
    )  # fmt: skip
    assert result.ret == EXIT_CONFIG
    _assert_names_every_problem(result.stderr.str())
    assert not report.exists()


@pytest.mark.e2e
def test_certify_with_specs_dir_exits_3_and_writes_no_report(tmp_path: Path) -> None:
    """As a user runs it: a subprocess; nothing answers at the URL, the catalog is refused before that."""
    root = _broken_catalog(tmp_path)
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "certify", "--gateway-url", "http://127.0.0.1:9/v1",
         "--profile", "ezat", "--upstream", "live", "--specs-dir", str(root), "--report-dir", str(out)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False,
    )  # fmt: skip
    assert proc.returncode == EXIT_CONFIG, proc.stdout + proc.stderr
    _assert_names_every_problem(proc.stderr)
    assert "verdict" not in proc.stdout
    assert not out.exists() or not any(out.rglob("*"))  # no certificate, no badge, no summary


@pytest.mark.parametrize(
    "argv",
    [
        ["certify", "--profile", "ezat"],
        ["matrix", "--profile", "ezat"],
        ["mutants", "--profile", "ezat"],
        ["fuzz", "--profile", "ezat", "--examples", "1"],
    ],
    ids=["certify-bundled", "matrix", "mutants", "fuzz"],
)
@pytest.mark.e2e
def test_every_command_refuses_a_bundled_catalog_that_does_not_load(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _broken_catalog(tmp_path, ("ezat", "lyrouter", "relay"))
    monkeypatch.setattr(harness.paths, "specs_dir", lambda: root)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    extra = ["--out", str(out)] if argv[0] in ("matrix", "mutants") else ["--report-dir", str(out)]
    assert main([*argv, *extra]) == EXIT_CONFIG
    _assert_names_every_problem(capsys.readouterr().err)
    assert not out.exists() or not any(out.rglob("*"))


@pytest.mark.e2e
def test_collection_errors_are_counted_even_when_other_files_collected(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """`results.json` said 0 whenever anything collected; a path pytest cannot collect is counted."""
    from harness.simulator.app import SimulatorServer
    from tests.harness.plugin.test_plugin import RULES
    from tests.harness.tiny_gateways import KEY, make_gateway, serve

    pytester.makefile(".yaml", rules=RULES)
    pytester.makepyfile(test_broken="import no_such_module_anywhere\n")
    report = tmp_path / "r.json"
    with SimulatorServer() as provider, serve(make_gateway(provider.url)) as gateway:
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "--gateway-url", f"{gateway}/v1", "--gateway-key", KEY,
            "--profile", "ezat", "--upstream", "live", "--report-json", str(report),
            "--rule", "ezat/test/refuse-n", str(pytester.path),
        )  # fmt: skip
    assert result.ret != 0
    document = json.loads(report.read_text())
    assert document["collection_errors"] == 1


# --- issue 20 item 2: a wrong base path --------------------------------------------------------------


@pytest.mark.e2e
def test_certify_the_reference_gateway_without_its_base_path_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reference gateway answers an unknown path with its own JSON envelope: still no endpoint there."""
    from harness.orchestrate.embedded import reference_gateway
    from harness.simulator.app import SimulatorServer

    out = tmp_path / "report"
    with SimulatorServer() as sim, reference_gateway("ezat", sim.url, "k-1", tmp_path / "gw.log") as url:
        root = url.removesuffix("/openai/v1")
        argv = ["certify", "--gateway-url", root, "--profile", "ezat", "--upstream", "live",
                "--gateway-key", "k-1", "--report-dir", str(out)]  # fmt: skip
        assert main(argv) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "no chat completions endpoint at this URL" in err
    assert "the documented base path is /openai/v1" in err
    assert not out.exists()


def test_the_failure_pattern_names_the_base_path_for_an_unknown_path_envelope() -> None:
    from harness.report.patterns import failure_patterns

    body = json.dumps(
        {"error": {"message": "Unknown path /x.", "type": "invalid_request_error", "code": None}}
    )
    results = [
        {"rule_id": f"ezat/a/r{i}", "outcome": "FAIL", "violations": [],
         "exchange": {"response": {"status": 404, "body": body}}}
        for i in range(6)
    ]  # fmt: skip
    (pattern,) = failure_patterns({"profile": {"name": "ezat"}, "results": results})
    assert "likely the base path" in pattern.cause
    assert "invalid_request_error" in pattern.line()


# --- issue 20 item 7: the docs ship beside their profiles -------------------------------------------


@pytest.mark.e2e
def test_lint_specs_and_drift_need_nothing_outside_a_fresh_clone(tmp_path: Path) -> None:
    """A copy of specs/ with no `shared/` anywhere near it: lint-specs exits 0, drift reads the shipped doc."""
    specs = tmp_path / "clone" / "specs"
    shutil.copytree(SPECS, specs)
    env = {k: v for k, v in os.environ.items() if k != "GC_SHARED_DIR"} | {"PYTHONPATH": str(ROOT)}
    lint = subprocess.run(
        [sys.executable, "-m", "harness.cli", "lint-specs", "--specs-dir", str(specs), "--profile", "lyrouter"],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=False,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout + lint.stderr
    drift = subprocess.run(
        [sys.executable, "-m", "harness.cli", "drift", "--profile", "relay", "--specs-dir", str(specs)],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=False,
    )  # fmt: skip
    assert drift.returncode == 0, drift.stdout + drift.stderr
    assert "doc relay-chat-completions" in drift.stdout and "verdict: no drift" in drift.stdout


def test_the_wheel_ships_the_docs_beside_their_profiles() -> None:
    """The wheel force-includes specs/ whole; the docs are files of it, so they ship (hatchling is not
    installed here to build one: the check reads the configuration and the tree it includes; a wheel built
    with `pip wheel .` holds harness/_data/specs/<profile>/<doc>.md)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert (
        config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]["specs"]
        == "harness/_data/specs"
    )
    for profile in ("ezat", "lyrouter", "relay"):
        assert (SPECS / profile / f"{profile}-chat-completions.md").is_file()
