"""Wiring mistakes are named before any rule runs (issue 35): a gateway whose provider traffic goes to another
replay upstream than the one the run registers its cases with, and a dead --replay-url, each end in one line and
exit 3; a gateway wired right passes the probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.orchestrate.child import replay_upstream
from harness.orchestrate.embedded import free_port, reference_gateway

KEY = "gc-wiring-key-0123"


def certify(url: str, *extra: str, out: Path) -> int:
    return cli_main(["certify", "--gateway-url", url, "--gateway-key", KEY, "--profile", "ezat",
                     "--rule", "ezat/response/id-is-request-id", "--report-dir", str(out), *extra])  # fmt: skip


@pytest.mark.e2e
def test_a_gateway_wired_to_another_replay_is_one_line_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with replay_upstream() as other, reference_gateway("ezat", other, KEY, tmp_path / "gw.log") as url:
        assert (
            certify(url, "--replay-port", str(free_port()), out=tmp_path / "a") == 3
        )  # certify serves its own
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "does not reach the replay upstream" in err[0]
        with replay_upstream() as theirs:
            assert certify(url, "--replay-url", theirs, out=tmp_path / "b") == 3
        assert (
            certify(url, "--replay-url", other, out=tmp_path / "c") == 0
        )  # wired right: the rule runs and passes


@pytest.mark.e2e
def test_a_dead_replay_url_is_one_line_and_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with replay_upstream() as replay, reference_gateway("ezat", replay, KEY, tmp_path / "gw.log") as url:
        assert certify(url, "--replay-url", f"http://127.0.0.1:{free_port()}", out=tmp_path / "d") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not answer" in err[0]
