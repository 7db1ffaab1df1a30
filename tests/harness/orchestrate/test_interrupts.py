"""Runs that survive the real world (issue 48), end to end with real processes and real signals: SIGINT and SIGTERM
mid-run stop every process the command started, keep what was judged (marked interrupted, never a pass), say one line
and exit 130 / 143; two certifies at once never share or destroy each other's report folder.

Each waits for a condition (a catalog run has judged something, a gateway is up), never for a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.orchestrate.child import replay_upstream
from harness.orchestrate.embedded import reference_gateway
from harness.orchestrate.processes import descendants
from harness.orchestrate.progress import judged

ROOT = Path(__file__).resolve().parents[3]
KEY = "gc-interrupt-key-0123"
pytestmark = pytest.mark.e2e


def _start(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """The command as a terminal runs it: a job (process group) of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *argv], cwd=cwd, env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def _until(condition: Callable[[], bool], proc: subprocess.Popen[str], what: str, limit: float = 600) -> None:
    """Wait for `condition` while `proc` runs (a bound only against a hang: never an assert on time)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert proc.poll() is None, f"the command ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.2)


def _judged_so_far(report: Path) -> int:
    return sum(
        judged(p.read_text(encoding="utf-8", errors="replace")) for p in report.glob("*/pytest-output.txt")
    )


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _interrupt(
    proc: subprocess.Popen[str], signum: int, group: bool = False
) -> tuple[int, str, str, list[int]]:
    """Send `signum` to the command (as `timeout` or a CI cancel does), or to its whole job (`group`: as a terminal's
    Ctrl-C does); its exit code, output, and the processes it had started."""
    started = descendants(proc.pid)
    assert started, "the command had started no process yet"
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err, started


def _none_left(started: list[int]) -> None:
    """No process the command started is running: the one that ends with it (multiprocessing's resource tracker,
    which reads the closed pipe) is given until it has read it."""
    deadline = time.monotonic() + 60
    while (left := [p for p in started if _running(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes()[:120] for p in left]


def _marked(report: Path, name: str) -> int:
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in report.glob("*/results.json")]
    assert documents and all(d.get("interrupted") == name for d in documents)
    summary = (report / "summary.md").read_text(encoding="utf-8")
    assert "INTERRUPTED" in summary and "— PASS" not in summary
    assert not (report / "conformance-report.yaml").exists()  # nothing to publish
    return sum(len(d["results"]) for d in documents)


def test_sigint_mid_run_keeps_what_was_judged_and_leaves_no_process(tmp_path: Path) -> None:
    report = tmp_path / "report"
    proc = _start("certify", "--report-dir", str(report), cwd=tmp_path)
    _until(lambda: _judged_so_far(report) > 0, proc, "a catalog run judged a variant")
    code, out, err, started = _interrupt(proc, signal.SIGINT, group=True)  # Ctrl-C
    assert code == 130, err
    line = err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in err, err
    assert line.startswith("gateway-conformance certify: interrupted by SIGINT: ")
    judged_count = _marked(report, "SIGINT")
    assert f"{judged_count:,} rule variant(s) judged so far, written to {report}" in line
    assert "KeyboardInterrupt" not in out
    _none_left(started)


@pytest.fixture
def your_gateway(tmp_path: Path) -> Iterator[tuple[str, str]]:
    with replay_upstream() as replay, reference_gateway("ezat", replay, KEY, tmp_path / "gw.log") as url:
        yield url, replay


def test_sigterm_mid_run_of_your_gateway_is_143_and_one_line(
    tmp_path: Path, your_gateway: tuple[str, str]
) -> None:
    url, replay = your_gateway
    report = tmp_path / "report"
    proc = _start("certify", "--gateway-url", url, "--profile", "ezat", "--replay-url", replay,
                  "--report-dir", str(report), cwd=tmp_path, env={"GC_GATEWAY_KEY": KEY})  # fmt: skip
    _until(lambda: _judged_so_far(report) > 0, proc, "the catalog run judged a variant")
    code, out, err, started = _interrupt(proc, signal.SIGTERM)
    assert code == 143, err
    assert len(err.strip().splitlines()) == 1 and "interrupted by SIGTERM" in err
    assert _marked(report, "SIGTERM") > 0
    assert "KeyboardInterrupt" not in out and "Interrupted" not in out
    _none_left(started)


@pytest.mark.parametrize(
    "argv",
    [
        ("fuzz", "--examples", "200000"),
        ("clients", "--profile", "ezat", "--client", "openai-python"),
        ("mutants", "--profile", "ezat", "--sample", "3"),
    ],
    ids=["fuzz", "clients", "mutants"],
)
def test_sigterm_stops_every_command_and_its_gateways(tmp_path: Path, argv: tuple[str, ...]) -> None:
    out = "--out" if argv[0] == "mutants" else "--report-dir"
    proc = _start(*argv, out, str(tmp_path / "out"), cwd=tmp_path)
    _until(
        lambda: any(b"reference_gateway" in _cmdline(p) for p in descendants(proc.pid)), proc, "a gateway ran"
    )
    code, _out, err, started = _interrupt(proc, signal.SIGTERM)
    assert code == 143, err
    assert (
        len(err.strip().splitlines()) == 1 and f"gateway-conformance {argv[0]}: interrupted by SIGTERM" in err
    )
    _none_left(started)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_two_certifies_at_once_each_have_their_own_folder(tmp_path: Path) -> None:
    argv = ("certify", "--profile", "ezat", "--rule", "ezat/response/*")
    first, second = _start(*argv, cwd=tmp_path), _start(*argv, cwd=tmp_path)  # the same second, the same cwd
    # and one that fails at start beside them: it used to delete the folder the others were writing in
    failing = _start("certify", "--profile", "ezat", "--rule", "ezat/nothing/*", cwd=tmp_path)
    assert failing.communicate(timeout=600) and failing.returncode == 3
    outs = [p.communicate(timeout=600) for p in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outs
    folders = sorted((tmp_path / "gc-report").iterdir())
    assert len(folders) == 2
    said = sorted(
        line.removeprefix("report: ")
        for out, _ in outs
        for line in out.splitlines()
        if line.startswith("report: ")
    )
    assert said == [str(f) for f in folders]  # each run said its own folder
    for folder in folders:  # each holds one run, whole
        assert (folder / "certificate.html").is_file() and (folder / "ezat" / "results.json").is_file()


def test_a_second_certify_into_a_folder_in_use_is_refused_and_harms_nothing(tmp_path: Path) -> None:
    report = tmp_path / "shared"
    first = _start("certify", "--profile", "ezat", "--report-dir", str(report), cwd=tmp_path)
    _until(lambda: (report / ".gateway-conformance.lock").is_file(), first, "the first run took its folder")
    second = _start("certify", "--profile", "ezat", "--report-dir", str(report), cwd=tmp_path)
    _out, err = second.communicate(timeout=600)
    assert second.returncode == 3 and "another gateway-conformance run (pid" in err, err
    _out, err = first.communicate(timeout=900)
    assert first.returncode == 0, err
    assert (report / "ezat" / "results.json").is_file() and (report / "certificate.html").is_file()
