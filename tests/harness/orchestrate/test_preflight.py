"""An outage is not a verdict (issue 48): the preflight reads each answer within a timeout and with a cap, says what
came back (status, content type, JSON or not, size), and a gateway that does not answer its API at all is exit 2 in
one line before any rule runs; what points at something that is not the API is exit 3; live, a model id the gateway
does not serve is exit 3 before the budget is spent. And an endless stream is judged in bounded output."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main
from harness.orchestrate.child import replay_upstream
from harness.orchestrate.embedded import reference_gateway
from harness.orchestrate.preflight import READ_CAP, ProbeAnswer, describe, diagnose, outage, preflight
from harness.outcomes import EXIT_CONFIG, EXIT_FAILURES, EXIT_HARNESS
from tests.harness.hostile_gateways import hostile_gateway

KEY = "gc-preflight-key-0123"
ROOT = Path(__file__).resolve().parents[3]


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def replay() -> Iterator[str]:
    with replay_upstream() as url:
        yield url


def _certify(url: str, replay: str, out: Path, *extra: str) -> int:
    return main(["certify", "--gateway-url", url, "--profile", "openai", "--replay-url", replay,
                 "--gateway-key", KEY, "--report-dir", str(out), *extra])  # fmt: skip


# --- what came back, in a few words (pure) ------------------------------------------------------------------


def test_answers_are_described_by_status_type_json_and_size() -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    assert describe(ProbeAnswer(502, page, "text/html")) == "an HTML page (“502 Bad Gateway”)"
    assert describe(ProbeAnswer(200, bytes(range(256)) * 16, "application/octet-stream")).startswith(
        "4 KB of binary application/octet-stream"
    )
    huge = ProbeAnswer(200, b" " * READ_CAP, "application/json", size=300 << 20, capped=True)
    assert describe(huge) == "more than 64 KB of application/json (300 MB announced)"
    envelope = json.dumps({"error": {"message": "messages: required", "type": "invalid_request_error"}})
    assert describe(ProbeAnswer(400, envelope.encode(), "application/json")).startswith("an error envelope")


def test_outages_are_told_from_configuration_and_from_what_the_rules_judge() -> None:
    url = "http://gw/v1"
    hung = ProbeAnswer(None, error="none within 10 s of sending", connected=True)
    assert diagnose(url, hung, key_given=True, base_path=None) is None
    assert "does not answer its API" in (outage(url, hung) or "")
    page = ProbeAnswer(502, b"<html><title>502 Bad Gateway</title></html>", "text/html")
    assert "answers 502 with an HTML page" in (outage(url, page) or "")
    refused = ProbeAnswer(None, error="ConnectError: [Errno 111] Connection refused")
    assert "nothing answers at" in (diagnose(url, refused, key_given=True, base_path=None) or "")
    # a 500 in the API's own envelope is the rules' to judge, not an outage
    envelope = json.dumps({"error": {"message": "boom", "type": "server_error"}}).encode()
    assert outage(url, ProbeAnswer(500, envelope, "application/json")) is None
    # a success that is not the API's: a wrong URL, exit 3
    binary = ProbeAnswer(200, bytes(range(256)), "application/octet-stream", size=256)
    assert "not an answer of the OpenAI Chat Completions API" in (
        diagnose(url, binary, key_given=True, base_path=None) or ""
    )
    # a URL naming the endpoint itself is told so, not "did you forget /v1?"
    line = diagnose(
        "http://gw/v1/messages", ProbeAnswer(404, b"Not Found", "text/plain"), key_given=True, base_path=None
    )
    assert line is not None and "names the endpoint itself (/messages): drop it" in line
    assert "did you forget" not in line


# --- end to end: the gateways of the issue ------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("mode", "code", "said"),
    [
        ("hang", EXIT_HARNESS, "got no answer (none within 10 s of sending); an outage, not a verdict"),
        ("html502", EXIT_HARNESS, "answers 502 with an HTML page (“502 Bad Gateway”) to an empty request"),
        ("binary", EXIT_CONFIG, "answers 200 with 4 KB of binary application/octet-stream, not an answer"),
        ("page", EXIT_CONFIG, "answers 200 with an HTML page (“Acme Gateway - Sign in”), not an answer"),
    ],
    ids=["hanging", "html-502", "binary", "html-page"],
)
def test_a_gateway_that_does_not_answer_its_api_is_one_line_before_any_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replay: str, mode: str, code: int, said: str
) -> None:
    out = tmp_path / "report"
    with hostile_gateway(mode) as url:
        assert _certify(url, replay, out) == code
    line = _one_line(capsys.readouterr().err)
    assert said in line and "harness failure" not in line
    assert not out.exists()  # no rule ran, no report


def test_a_500_page_for_the_empty_request_alone_is_not_an_outage() -> None:
    # The real request goes out on a connection of its own: the one the 500 page came on is dropped by the server
    # (as uvicorn does after an unhandled exception), and a reset of it is not the gateway's answer.
    with hostile_gateway("crash-on-empty") as url:
        preflight(url, KEY, model="gpt-5.5")  # no GatewayUnavailable


@pytest.mark.e2e
def test_the_pytest_route_exits_2_for_a_hanging_gateway(pytester: pytest.Pytester, replay: str) -> None:
    with hostile_gateway("hang") as url:
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--gateway-url", url, "--profile", "openai", "--replay-url", replay,
            "--gateway-key", KEY,
        )  # fmt: skip
    assert result.ret == EXIT_HARNESS
    assert "does not answer its API" in result.stderr.str() and "collected" not in result.stdout.str()


@pytest.mark.e2e
def test_a_300_mb_answer_is_read_with_a_cap_under_a_memory_bound(tmp_path: Path, replay: str) -> None:
    """The whole certify under a 400 MB address-space limit: reading the body whole (the issue's 676 MB peak)
    could not fit."""
    with hostile_gateway("huge") as url:
        proc = subprocess.run(
            [sys.executable, "-c", "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (400 << 20, 400 << 20));"
             "from harness.cli import main; sys.exit(main(sys.argv[1:]))",
             "certify", "--gateway-url", url, "--profile", "openai", "--replay-url", replay, "--gateway-key", KEY,
             "--report-dir", str(tmp_path / "report")],
            capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
        )  # fmt: skip
    assert proc.returncode == EXIT_CONFIG, proc.stderr
    assert "more than 64 KB of application/json (300 MB announced)" in _one_line(proc.stderr)


@pytest.mark.e2e
def test_live_a_model_the_gateway_does_not_serve_is_exit_3_before_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replay: str
) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("MODEL: no-such-model\n", encoding="utf-8")
    with reference_gateway("ezat", replay, KEY, tmp_path / "gw.log") as url:
        code = main(["certify", "--gateway-url", url, "--profile", "ezat", "--upstream", "live", "--gateway-key", KEY,
                     "--model-map", str(models), "--report-dir", str(tmp_path / "report")])  # fmt: skip
        log = (tmp_path / "gw.log").read_text(encoding="utf-8").splitlines()
        calls = [line for line in log if " INFO " in line and "/chat/completions" in line]
    assert code == EXIT_CONFIG
    line = _one_line(capsys.readouterr().err)
    assert "does not serve the model 'no-such-model' (role MODEL)" in line and "--model-map" in line
    assert len(calls) == 2  # the empty preflight and the model's: no rule spent the budget


@pytest.mark.e2e
def test_a_stream_cut_mid_event_is_headlined_as_cut(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], replay: str
) -> None:
    out = tmp_path / "report"
    with hostile_gateway("cut", replay) as url:
        assert _certify(url, replay, out, "--rule", "openai/streaming/done-last") == EXIT_FAILURES
    printed = capfd.readouterr().out
    first = printed[printed.index("violations:") :].splitlines()[1]
    assert "the stream was cut" in first or "the answer was cut" in first, first  # not `data is not JSON`
    results = json.loads((out / "openai" / "results.json").read_text(encoding="utf-8"))["results"]
    assert "cut" in results[0]["violations"][0]["message"]


@pytest.mark.e2e
def test_an_endless_stream_is_judged_in_bounded_output(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], replay: str
) -> None:
    out = tmp_path / "report"
    with hostile_gateway("endless", replay) as url:
        assert _certify(url, replay, out, "--rule", "openai/streaming/done-last") == EXIT_FAILURES
    printed = capfd.readouterr().out  # the child run's output included
    assert len(printed.splitlines()) < 200, len(printed.splitlines())
    assert "the harness stopped reading at its byte cap" in printed
    for name, limit in (
        ("certificate.html", 1 << 20),
        ("summary.md", 60_000),
        ("openai/results.json", 1 << 20),
    ):
        assert (out / name).stat().st_size < limit, name
