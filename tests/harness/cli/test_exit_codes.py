"""Issue 15: verdicts CI can trust. An empty selection, a gateway no rule could judge and bad configuration
exit 3 with one line and leave no report; the plugin (pytester) and the commands (main()) alike."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

import httpcore  # noqa: F401  (see test_plugin.py: keep the harness's exception classes the same objects)
import pytest

import harness.plugin.items  # noqa: F401
from harness.cli import main
from harness.errors import ConfigError
from harness.orchestrate.child import Run, run_pytest
from harness.orchestrate.preflight import ProbeAnswer, diagnose
from harness.outcomes import EXIT_CONFIG
from harness.replay.server import ReplayServer
from tests.harness.plugin.test_plugin import CASSETTES, RULES
from tests.harness.tiny_gateways import KEY, make_gateway, serve


@pytest.fixture(autouse=True)
def _inner_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(CASSETTES) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(replay: ReplayServer) -> Iterator[str]:
    with serve(make_gateway(replay.url)) as url:
        yield url


def _plugin(pytester: pytest.Pytester, url: str, replay: ReplayServer, *extra: str) -> pytest.RunResult:
    pytester.makefile(".yaml", rules=RULES)
    return pytester.runpytest(
        "-p", "no:cacheprovider", "--gateway-url", url, "--profile", "ezat", "--replay-url", replay.url,
        "--rule-timeout", "2", str(pytester.path), *extra,
    )  # fmt: skip


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "harness failure" not in err and "pytest could not run" not in err
    return lines[0]


# --- 1. an empty selection -------------------------------------------------------------------------


@pytest.mark.e2e
def test_plugin_empty_selection_exits_3_naming_the_patterns(
    pytester: pytest.Pytester, replay: ReplayServer, gateway: str
) -> None:
    report = pytester.path / "r.json"
    result = _plugin(pytester, f"{gateway}/v1", replay, "--gateway-key", KEY, "--rule", "ezat/nothing/*",
                     "--report-json", str(report))  # fmt: skip
    assert result.ret == EXIT_CONFIG
    assert "--rule ezat/nothing/*: no rule of profile ezat matches" in result.stderr.str()
    assert not report.exists()


def test_certify_empty_selection_exits_3_and_writes_no_certificate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    code = main(["certify", "--profile", "ezat", "--rule", "ezat/nothing/*", "--report-dir", str(out)])
    assert code == EXIT_CONFIG
    assert "ezat/nothing/*" in _one_line_error(capsys.readouterr().err)
    assert not out.exists()


def test_certify_a_pattern_matching_nothing_among_others_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["certify", "--rule", "ezat/finish/*", "--rule", "ezat/finsh/*", "--report-dir", str(tmp_path)]
    assert main(argv) == EXIT_CONFIG
    line = _one_line_error(capsys.readouterr().err)
    assert "ezat/finsh/*" in line and "ezat/finish/*" not in line
    assert list(tmp_path.iterdir()) == []


def test_matrix_empty_selection_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--rule", "nothing/*", "--out", str(tmp_path / "m")]) == EXIT_CONFIG
    assert "nothing/*" in _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "m").exists()


# --- 2. the preflight ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "key", "message"),
    [
        ("", KEY, "answers 404 with 9 bytes of text/plain (“Not Found”)"),
        ("/v1", None, "answers 401 and no key was given: set GC_GATEWAY_KEY"),
        ("/v1", "wrong-key", "refused the key (HTTP 401: invalid_api_key invalid key)"),
    ],
    ids=["no-v1", "no-key", "wrong-key"],
)
@pytest.mark.e2e
def test_plugin_preflight_diagnoses_in_one_line(
    pytester: pytest.Pytester,
    replay: ReplayServer,
    gateway: str,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    key: str | None,
    message: str,
) -> None:
    monkeypatch.delenv("GC_GATEWAY_KEY", raising=False)
    report = pytester.path / "r.json"
    result = _plugin(pytester, gateway + path, replay, *(["--gateway-key", key] if key else []),
                     "--report-json", str(report))  # fmt: skip
    assert result.ret == EXIT_CONFIG
    assert message in result.stderr.str()
    if not path:
        assert "did you forget /v1? (the documented base path is /openai/v1)" in result.stderr.str()
    assert "collected" not in result.stdout.str() and not report.exists()  # no rule ran


@pytest.mark.e2e
def test_plugin_preflight_nothing_listening(pytester: pytest.Pytester, replay: ReplayServer) -> None:
    result = _plugin(pytester, "http://127.0.0.1:9/v1", replay)
    assert result.ret == EXIT_CONFIG
    assert "nothing answers at http://127.0.0.1:9/v1" in result.stderr.str()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:9/v1", "nothing answers at http://127.0.0.1:9/v1"),
        ("{gateway}", "did you forget /v1?"),
    ],
    ids=["nothing-listening", "no-v1"],
)
def test_certify_preflight_exits_3_without_a_report(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    gateway: str,
    replay: ReplayServer,
    url: str,
    message: str,
) -> None:
    out = tmp_path / "report"
    argv = ["certify", "--gateway-url", url.format(gateway=gateway), "--profile", "ezat",
            "--replay-url", replay.url, "--gateway-key", KEY, "--report-dir", str(out)]  # fmt: skip
    assert main(argv) == EXIT_CONFIG
    assert message in _one_line_error(capsys.readouterr().err)
    assert not out.exists()


def test_preflight_diagnosis_of_an_html_404_and_of_answers_the_rules_judge() -> None:
    html = ProbeAnswer(404, b"<html><body>Not Found</body></html>", "text/html; charset=utf-8")
    line = diagnose("http://gw:8080", html, key_given=True, base_path=None)
    assert line is not None and "answers 404 with an HTML page" in line and "did you forget /v1?" in line
    # Issue 20: a 404 with an OpenAI error envelope is a missing endpoint too (gateways envelope unknown
    # paths); only an envelope about the model means the endpoint read the body.
    envelope = json.dumps({"error": {"message": "Unknown path", "type": "invalid_request_error"}}).encode()
    line = diagnose(
        "http://gw", ProbeAnswer(404, envelope, "application/json"), key_given=True, base_path="/openai/v1"
    )
    assert line is not None and line.startswith("no chat completions endpoint at this URL")
    assert "(the documented base path is /openai/v1)" in line
    model = json.dumps({"error": {"message": "no model", "type": "invalid_request_error", "param": "model"}})
    assert diagnose("http://gw/v1", ProbeAnswer(404, model.encode()), key_given=True, base_path=None) is None
    assert diagnose("http://gw/v1", ProbeAnswer(500, b"boom"), key_given=True, base_path=None) is None
    assert diagnose("http://gw/v1", ProbeAnswer(0), key_given=False, base_path=None) is None  # slow or cut


# --- 3. configuration errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]\n", "expected a mapping of ROLE: model-id"),
        ("MODLE: x\n", "unknown role(s) MODLE; did you mean MODEL"),
        ("MODEL: [unclosed\n", "cannot read it"),
    ],
    ids=["not-a-mapping", "unknown-role", "bad-yaml"],
)
def test_certify_bad_model_map_exits_3_in_one_line_and_no_half_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replay: ReplayServer, content: str, message: str
) -> None:
    bad = tmp_path / "map.yaml"
    bad.write_text(content)
    out = tmp_path / "report"
    argv = ["certify", "--gateway-url", "http://127.0.0.1:9/v1", "--profile", "ezat", "--replay-url",
            replay.url, "--model-map", str(bad), "--report-dir", str(out)]  # fmt: skip
    assert main(argv) == EXIT_CONFIG
    assert message in _one_line_error(capsys.readouterr().err)
    assert not out.exists()


def test_certify_expectation_without_reason_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.yaml"
    known.write_text("profile: ezat\nexpectations:\n  - rule: ezat/finish/*\n    outcome: FAIL\n")
    out = tmp_path / "report"
    assert main(["certify", "--profile", "ezat", "--expectations", str(known), "--report-dir", str(out)]) == 3
    assert "'reason' is a required property" in _one_line_error(capsys.readouterr().err)
    assert not out.exists()


@pytest.mark.e2e
def test_run_pytest_turns_the_child_usage_error_into_a_config_error(tmp_path: Path) -> None:
    """What certify checks first, the child checks too; its one line comes back as a ConfigError."""
    bad = tmp_path / "map.yaml"
    bad.write_text("NOPE: x\n")
    run = Run("ezat", "http://127.0.0.1:9/v1", "t", None, (), model_map=str(bad), upstream="live")
    with pytest.raises(ConfigError, match=r"^--model-map .*: unknown role\(s\) NOPE; profile ezat has"):
        run_pytest(run, tmp_path / "out", None, [])


@pytest.mark.e2e
def test_plugin_bad_model_map_exits_3(pytester: pytest.Pytester, replay: ReplayServer) -> None:
    bad = pytester.path / "map.txt"
    bad.write_text("MODLE: x\n")
    result = _plugin(pytester, "http://127.0.0.1:9/v1", replay, "--model-map", str(bad))
    assert result.ret == EXIT_CONFIG
    assert "unknown role(s) MODLE" in result.stderr.str()


@pytest.mark.e2e
def test_plugin_run_that_judged_nothing_exits_5_not_0(
    pytester: pytest.Pytester, replay: ReplayServer, gateway: str
) -> None:
    """Every rule needs MODEL and the map sends it to null: nothing is judged, which is never a pass (exit 5)."""
    nulled = pytester.path.parent / "null-map.yaml"  # outside the collected folder
    nulled.write_text("MODEL: null\n")
    result = _plugin(pytester, f"{gateway}/v1", replay, "--gateway-key", KEY, "--model-map", str(nulled))
    assert result.ret == 5
    assert "nothing judged" in result.stdout.str()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["matrix", "--gateway", "x=http://127.0.0.1:9/v1", "--replay-port", "0"], "nothing answers at"),
        (["mutants", "--profile", "nope"], "unknown profile 'nope'"),
        (["mutants", "--mutant", "no-such-mutant-*"], "no mutant of profile ezat matches"),
        (["record", "--provider", "nobody"], "unknown provider 'nobody'"),
    ],
    ids=["matrix-unreachable-gateway", "mutants-profile", "mutants-selection", "record-provider"],
)
@pytest.mark.e2e
def test_every_command_exits_3_on_bad_configuration(
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    out = ["--out", str(tmp_path / "out")] if argv[0] in ("matrix", "mutants") else []
    assert main([*argv, *out]) == EXIT_CONFIG
    assert message in _one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


# --- 4. a HARNESS_ERROR says why, everywhere -------------------------------------------------------

BROKEN_RULE = """\
source: {doc: ezat-chat-completions, section: Streaming}
rules:
  - id: ezat/test/missing-cassette
    level: MUST
    title: a rule whose cassette does not exist (the suite's fault)
    source: {quote: "Text arrives as `delta.content`."}
    request: {body: {model: $MODEL, messages: [{role: user, content: hi}]}}
    upstream: {cassette: anthropic/does-not-exist}
    expect: {status: 200}
"""


@pytest.mark.e2e
def test_harness_error_reason_in_terminal_junit_and_certificate(
    pytester: pytest.Pytester, replay: ReplayServer, gateway: str
) -> None:
    import xml.etree.ElementTree as ET

    from harness.report import certificate_html

    pytester.makefile(".yaml", broken=BROKEN_RULE)
    report, junit = pytester.path / "r.json", pytester.path / "j.xml"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--gateway-url", f"{gateway}/v1", "--gateway-key", KEY, "--profile", "ezat",
        "--replay-url", replay.url, "-rA", "--junitxml", str(junit), "--report-json", str(report),
        str(pytester.path),
    )  # fmt: skip
    why = "cassette 'anthropic/does-not-exist': no such cassette"
    stdout = result.stdout.str()
    assert "1 harness error" in stdout
    assert "HARNESS ERRORS (the suite's own fault" in stdout
    assert "HARNESS_ERROR broken.yaml::ezat/test/missing-cassette - replay upstream: ReplayError" in stdout
    assert why in stdout.split("HARNESS ERRORS")[1]
    failures = [e for e in ET.parse(junit).iter() if e.tag in ("failure", "error")]
    assert len(failures) == 1 and why in failures[0].attrib["message"]
    document = json.loads(report.read_text())
    assert html.escape(why) in certificate_html([document])


def test_embedded_rerun_line_starts_what_it_needs() -> None:
    from harness.certify.command import target_rerun
    from harness.orchestrate.child import rerun_line

    extra = ["--rule", "ezat/finish/*", "--rule-timeout", "5.0", "-n", "2", "--strict-rules"]
    assert rerun_line(["gateway-conformance", "certify", "--profile", "ezat"], extra) == (
        "gateway-conformance certify --profile ezat --rule-timeout 5.0 --strict-rules"
    )
    run = Run("ezat", "http://127.0.0.1:8080/v1", "t", None, ("slow",), model_map="/m.yaml")
    assert target_rerun(run, 9100, [], key=True) == (
        'GC_GATEWAY_KEY="$GC_GATEWAY_KEY" gateway-conformance certify --gateway-url http://127.0.0.1:8080/v1 '
        "--profile ezat --replay-port 9100 --model-map /m.yaml --feature slow"
    )


# --- 6. known failures: counted, explained, and drafts that must be edited --------------------------

KNOWN = """\
profile: ezat
expectations:
  - rule: ezat/test/text
    outcome: FAIL
    reason: leaks Anthropic stop reasons
    ticket: TINY-1
    expires: "2999-01-01"
"""


@pytest.mark.e2e
def test_xfail_counted_with_reason_and_ticket_in_table_summary_and_certificate(
    pytester: pytest.Pytester, replay: ReplayServer
) -> None:
    from harness.report import certificate_html, markdown_summary
    from harness.report.text import summarize

    known = pytester.path / "known.txt"
    known.write_text(KNOWN)
    report = pytester.path / "r.json"
    with serve(make_gateway(replay.url, bug="leaks-stop-reason")) as url:
        result = _plugin(pytester, f"{url}/v1", replay, "--gateway-key", KEY, "--expectations", str(known),
                         "--report-json", str(report))  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    document = json.loads(report.read_text())
    assert document["totals"]["XFAIL"] == 2
    table = summarize([document])
    header, *_, total = table.split("\n\n")[0].splitlines()
    assert header.split()[-1] == "xfail" and total.split()[-1] == "2"
    assert "ezat/test/text [stream=false]: leaks Anthropic stop reasons (TINY-1, expires 2999-01-01)" in table
    summary = markdown_summary([document])
    assert any(line.startswith("| area |") and line.endswith("| xfail |") for line in summary.splitlines())
    # refuse-n and overloaded pass, needs-slow is not applicable, both text variants are known failures.
    assert "| **all** | 2 | 0 | 0 | 0 | 1 | 0 | 2 |" in summary
    assert (
        "| `ezat/test/text` [stream=true] | leaks Anthropic stop reasons | TINY-1 | 2999-01-01 |" in summary
    )
    page = certificate_html([document])
    assert "Known failures" in page and "leaks Anthropic stop reasons</td><td>TINY-1</td>" in page


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("reason: leaks Anthropic stop reasons", "reason: 'TODO: why'"), "reason is still the draft's TODO"),
        (('    expires: "2999-01-01"\n', ""), "no expires: set expires: YYYY-MM-DD"),
        (('expires: "2999-01-01"', 'expires: "TODO: YYYY-MM-DD"'), "expires is still the draft's TODO"),
    ],
    ids=["todo-reason", "no-expiry", "todo-expiry"],
)
@pytest.mark.e2e
def test_unedited_expectations_are_a_configuration_error(
    pytester: pytest.Pytester, replay: ReplayServer, gateway: str, change: tuple[str, str], message: str
) -> None:
    known = pytester.path / "known.txt"
    known.write_text(KNOWN.replace(*change))
    result = _plugin(pytester, f"{gateway}/v1", replay, "--gateway-key", KEY, "--expectations", str(known))
    assert result.ret == EXIT_CONFIG
    assert f"expectations/0 (ezat/test/text): {message}" in result.stderr.str()


# --- 5. roles, a drafted model map, and one note for many rules failing the same way ---------------


def test_roles_lists_roles_and_features_with_their_meaning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roles", "--profile", "lyrouter"]) == 0
    out = capsys.readouterr().out
    assert "MODEL_NO_ROUTE" in out and "A model id no channel can serve (503 no_route_candidate)." in out
    assert "workspace-default-model" in out and "The workspace has a Default Model" in out


@pytest.mark.e2e
def test_roles_drafts_a_model_map_from_get_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from harness.errors import ModelMapError
    from harness.modelmap import load_model_map
    from harness.spec import load_profile

    listed = ["anthropic/claude-sonnet-5-5", "acme/claude-haiku-4-5", "acme/other"]

    async def models(request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return JSONResponse({"error": {"message": "key", "type": "auth"}}, status_code=401)
        return JSONResponse({"object": "list", "data": [{"id": i, "object": "model"} for i in listed]})

    draft = tmp_path / "map.yaml"
    with serve(Starlette(routes=[Route("/v1/models", models)])) as url:
        argv = ["roles", "--profile", "ezat", "--write-model-map", str(draft), "--gateway-url", f"{url}/v1"]
        assert main([*argv, "--gateway-key", KEY]) == 0
        assert main([*argv, "--gateway-key", "wrong"]) == EXIT_CONFIG  # a 401 is not a model list
    text = draft.read_text()
    with pytest.raises(ModelMapError, match=r"MODEL_NO_CACHE.* still hold the draft's TODO"):
        load_model_map(draft, load_profile("ezat"))  # refused until a human has chosen for each TODO
    filled = tmp_path / "filled.yaml"
    filled.write_text("\n".join(line.split("  # TODO")[0] for line in text.splitlines()), encoding="utf-8")
    models_map = load_model_map(filled, load_profile("ezat"))  # then the draft is a valid map of the profile
    assert models_map["MODEL"] == "anthropic/claude-sonnet-5-5"  # the default, listed
    assert models_map["MODEL_SAMPLING"] == "acme/claude-haiku-4-5"  # the listed id with the default's name
    assert '"anthropic/claude-haiku-3-5"  # TODO: the default is not listed' in text  # MODEL_NO_CACHE
    assert "#   acme/other" in text and "# MODEL_SMALL_OUTPUT: A model whose maximum output" in text


def _failed(rule: str, status: int, body: dict[str, object], expected: object) -> dict[str, object]:
    return {
        "rule_id": rule, "variant": {}, "outcome": "FAIL", "level": "MUST", "area": rule.split("/")[1],
        "source": {"quote": "q"}, "reason": None,
        "violations": [{"check": "status", "path": "status", "expected": expected, "actual": status,
                        "message": f"status {status}"}],
        "exchange": {"response": {"status": status, "body": json.dumps(body)}},
    }  # fmt: skip


def _document(results: list[dict[str, object]]) -> dict[str, object]:
    from harness.outcomes import count_outcomes

    return {
        "profile": {"name": "lyrouter", "doc": "d"}, "results": results, "totals": count_outcomes(results),
        "target": {"gateway_url": "http://gw/v1", "upstream": "replay"}, "suite": {"version": "t"},
        "timings": {"duration": 1.0}, "collection_errors": 0, "expectation_problems": [],
    }  # fmt: skip


def test_many_rules_failing_the_same_way_get_one_note_with_the_likely_cause() -> None:
    from harness.report import markdown_summary
    from harness.report.text import summarize

    no_route = {"error": {"message": "no route", "type": "server_error", "code": "no_route_candidate"}}
    results = [_failed(f"lyrouter/messages/r{i}", 503, no_route, 200) for i in range(17)]
    results += [_failed(f"lyrouter/errors/e{i}", 200, {"id": "x"}, 400) for i in range(6)]
    results += [_failed("lyrouter/errors/alone", 500, {"error": {"message": "m", "type": "t"}}, 200)]
    document = _document(results)
    # One status, two causes: two lines, each with its own message (not one line naming one of them).
    bad_max = {
        "error": {"message": "max_tokens: required (rule [gc:r#1a2b3c])", "type": "invalid_request_error"}
    }
    bad_field = {"error": {"message": "unknown field 'n'", "type": "invalid_request_error"}}
    two = _document([_failed(f"lyrouter/x/m{i}", 400, bad_max, 200) for i in range(5)]
                    + [_failed(f"lyrouter/x/f{i}", 400, bad_field, 200) for i in range(5)])  # fmt: skip
    two_text = summarize([two])
    assert two_text.count("failed the same way (HTTP 400 invalid_request_error: ") == 2
    # each quoted as the gateway wrote it (issue 48: a normalised quote read `gemini-…-pro`)
    assert "“max_tokens: required (rule [gc:r#1a2b3c])”" in two_text and "“unknown field 'n'”" in two_text
    for text in (summarize([document]), markdown_summary([document])):
        assert (
            text.count("17 lyrouter rules failed the same way (HTTP 503 no_route_candidate: “no route”)") == 1
        )
        assert "likely the model ids: map the profile's model roles" in text and "--write-model-map" in text
        assert text.count("6 lyrouter rules failed the same way (HTTP 200)") == 1
        assert "declare it with --feature NAME" in text
        assert (
            text.count("failed the same way") == 2
        )  # a single failure (lyrouter/errors/alone) is no pattern


def test_a_server_error_after_the_provider_was_asked_is_not_blamed_on_the_model_ids() -> None:
    """TensorZero 2026.6.0 answers a provider's 400 with 502 "All model providers failed …": the message names a
    model, but the provider was called with it, so the model id routed; the note says where to look instead."""
    from harness.report.text import summarize

    failed = {"error": {"message": "All variants failed with errors: gpt-test: All model providers failed"}}
    results = []
    for i in range(6):
        result = _failed(f"lyrouter/errors/p{i}", 502, failed, 400)
        result["exchange"]["upstream"] = [{"request": {"path": "/v1/chat/completions"}}]  # type: ignore[index]
        results.append(result)
    text = summarize([_document(results)])
    assert "6 lyrouter rules failed the same way (HTTP 502" in text
    assert "likely the model ids" not in text
    assert "its own server error: compare the provider's answer" in text
    # the same answer where no provider was asked is still the model-id hint
    unrouted = summarize([_document([_failed(f"lyrouter/errors/u{i}", 502, failed, 400) for i in range(6)])])
    assert "likely the model ids" in unrouted


# --- 7. help for every command and option; certify takes the plugin's options; a busy port ---------


def _parsers() -> Iterator[tuple[str, object]]:
    import argparse

    from harness.cli import build_parser

    top = build_parser()
    yield "gateway-conformance", top
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    yield from sub.choices.items()


def test_every_command_and_option_has_help() -> None:
    import argparse

    missing = []
    for name, parser in _parsers():
        assert isinstance(parser, argparse.ArgumentParser)
        assert parser.description, name
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing += [f"{name} {c.dest}" for c in action._choices_actions if not c.help]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("certify", "serve-upstream", "report", "matrix", "roles", "new-profile", "lint-specs",
                    "record", "mutants"):  # fmt: skip
        assert f"    {command}" in out, command


def test_certify_accepts_the_plugins_options() -> None:
    from harness.cli import build_parser
    from harness.orchestrate.options import OPTIONS

    for option in OPTIONS:
        if option.use == "plugin":
            continue
        choices = option.kwargs.get("choices")
        if option.kwargs.get("action") == "store_true":
            value = []
        else:
            value = [choices[-1] if choices else "1" if option.kwargs.get("type") else "x"]
        args = build_parser().parse_args(["certify", option.flags[0], *value])
        assert getattr(args, option.dest) not in (None, False, []), option.flags
    assert build_parser().parse_args(["certify", "--rule-timeout", "5"]).rule_timeout == 5.0


def test_serve_upstream_on_a_busy_port_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve-upstream", "--port", str(port)]) == EXIT_CONFIG
    assert f"cannot bind 127.0.0.1:{port}" in _one_line_error(capsys.readouterr().err)


@pytest.mark.e2e
def test_an_unknown_feature_exits_3_with_the_closest_name(
    pytester: pytest.Pytester, replay: ReplayServer, gateway: str
) -> None:
    """A misspelt --feature is a typo, not a claim that leaves its rules unjudged (issue 34)."""
    result = _plugin(
        pytester, f"{gateway}/v1", replay, "--gateway-key", KEY, "--feature", "loopback-download"
    )
    assert result.ret == EXIT_CONFIG
    assert (
        "--feature 'loopback-download' is not a feature of profile ezat: did you mean loopback-downloads?"
        in result.stderr.str()
    )
