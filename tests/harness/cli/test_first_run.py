"""Issue 20 item 8: the smaller things a new user met on a fresh clone, each as the user runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.outcomes import EXIT_CONFIG, EXIT_OK
from harness.report.html import certificate_html, run_seconds

ROOT = Path(__file__).resolve().parents[3]


def test_new_profile_takes_the_base_path_and_a_model_from_the_doc_it_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    specs = tmp_path / "conformance"
    doc = ROOT / "specs" / "ezat" / "ezat-chat-completions.md"
    assert main(["new-profile", "acme", "--doc", str(doc), "--specs-dir", str(specs)]) == EXIT_OK
    profile = yaml.safe_load((specs / "acme" / "profile.yaml").read_text())
    assert profile["base_path"] == "/openai/v1"  # the doc's endpoint, not a guessed /v1
    assert profile["models"]["MODEL"]["default"] == "anthropic/claude-sonnet-5-5"  # a model the doc names


def test_the_drafted_model_map_keeps_deliberately_unknown_ids(tmp_path: Path) -> None:
    from harness.modelmap import draft_model_map
    from harness.spec import load_profile

    ezat = draft_model_map(load_profile("ezat"), ["anthropic/claude-sonnet-5-5"], "GET test")
    line = next(x for x in ezat.splitlines() if x.startswith("UNKNOWN_MODEL:"))
    assert "keep: deliberately an id the gateway does not serve" in line and "TODO" not in line
    lyrouter = draft_model_map(load_profile("lyrouter"), ["@vmodel/does-not-exist"], "GET test")
    line = next(x for x in lyrouter.splitlines() if x.startswith("MODEL_NO_ROUTE:"))
    assert "your gateway lists it: choose another unknown id" in line


def test_roles_against_a_dead_url_errors_before_printing_the_listing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["roles", "--profile", "ezat", "--write-model-map", str(tmp_path / "m.yaml"),
            "--gateway-url", "http://127.0.0.1:9/v1"]  # fmt: skip
    assert main(argv) == EXIT_CONFIG
    captured = capsys.readouterr()
    assert "GET http://127.0.0.1:9/v1/models" in captured.err
    assert captured.out == ""  # no listing, then an error


@pytest.mark.parametrize("command", ["certify", "roles"])
def test_a_url_without_a_scheme_is_told_so(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = {
        "certify": ["certify", "--gateway-url", "127.0.0.1:8080/v1", "--profile", "ezat", "--upstream", "live",
                    "--report-dir", str(tmp_path / "r")],
        "roles": ["roles", "--profile", "ezat", "--write-model-map", str(tmp_path / "m.yaml"),
                  "--gateway-url", "127.0.0.1:8080/v1"],
    }[command]  # fmt: skip
    assert main(argv) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "expected an http(s) URL with a scheme and a host" in err
    assert "is the gateway running" not in err


def _doc(name: str, started: float, duration: float, url: str) -> dict:
    return {
        "profile": {"name": name, "doc": f"{name}-chat-completions", "title": name},
        "suite": {"version": "0.1.0"},
        "target": {"gateway_url": url, "upstream": "replay", "description": "reference gateway (embedded)"},
        "timings": {"started": started, "finished": started + duration, "duration": duration},
        "totals": {"PASS": 1},
        "collection_errors": 0,
        "expectation_problems": [],
        "results": [],
    }


def test_the_certificate_names_the_target_without_throwaway_urls_and_the_run_time_of_the_run() -> None:
    documents = [
        _doc("ezat", 1000.0, 100.0, "http://127.0.0.1:40001/openai/v1"),
        _doc("relay", 1100.0, 50.0, "http://127.0.0.1:40002/v1"),
    ]
    html = certificate_html(documents)
    assert "127.0.0.1:40001" not in html and "127.0.0.1:40002" not in html
    assert "reference gateway (embedded)" in html
    # Overlapping catalogs (certify runs profiles one after another, matrix may overlap): wall time, not a sum.
    overlapping = [_doc("ezat", 1000.0, 100.0, "u"), _doc("relay", 1050.0, 100.0, "u")]
    assert run_seconds(overlapping) == 150.0


def test_a_drafted_model_maps_todos_are_refused_until_filled(tmp_path: Path) -> None:
    """Like a drafted expectations file: a role still marked TODO is a configuration error naming it."""
    from harness.errors import ModelMapError
    from harness.modelmap import draft_model_map, load_model_map
    from harness.spec import load_profile

    profile = load_profile("ezat")
    path = tmp_path / "m.yaml"
    path.write_text(draft_model_map(profile, ["gw/only-this"], "GET test"), encoding="utf-8")
    with pytest.raises(ModelMapError, match=r"role\(s\) MODEL.* still hold the draft's TODO"):
        load_model_map(path, profile)
    filled = "\n".join(
        line.split("  # TODO")[0] if "# TODO" in line else line
        for line in path.read_text(encoding="utf-8").splitlines()
    )
    path.write_text(filled, encoding="utf-8")
    assert load_model_map(path, profile)["UNKNOWN_MODEL"] == profile.models["UNKNOWN_MODEL"].default
