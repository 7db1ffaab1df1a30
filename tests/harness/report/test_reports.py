"""Reports people read: the HTML certificate, the SVG badge, the Markdown summary, `report`, JUnit properties."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.cli import main as cli_main
from harness.outcomes import verdict
from harness.paths import schema_path
from harness.replay.server import ReplayServer
from harness.report import badge_svg, markdown_summary, write_reports
from harness.report.html import certificate_html
from harness.report.panes import parse_path
from tests.harness.tiny_gateways import KEY, make_gateway, serve

EVIL = '<script>alert("pwned")</script>'
CHROMIUM = Path("/usr/bin/chromium")


def _result(rule_id: str, outcome: str, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "rule_id": rule_id,
        "variant": {},
        "profile": "ezat",
        "area": rule_id.split("/")[1],
        "level": "MUST",
        "title": f"title of {rule_id}",
        "source": {
            "doc": "ezat-chat-completions",
            "section": "Finish reasons",
            "quote": f"quote of {rule_id}",
        },
        "reading": None,
        "outcome": outcome,
        "reason": None,
        "violations": [],
        "duration": 0.01,
        "nodeid": f"ezat/x.yaml::{rule_id}",
        "rerun": f"pytest --gateway-url http://gw/v1 --rule {rule_id}",
        "exchange": None,
        "diagnostics": [],
    }
    result.update(extra)
    return result


def _failure() -> dict[str, Any]:
    client = {
        "model": "claude",
        "n": 1,
        "messages": [{"role": "user", "content": "[gc:ezat/finish/length#ab12cd] hi"}],
    }
    upstream = {
        "model": "claude-x",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "[gc:ezat/finish/length#ab12cd] hi"}],
    }
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "claude",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": EVIL}, "finish_reason": "max_tokens"}
        ],
    }
    served = {"type": "message", "content": [{"type": "text", "text": "Hel"}], "stop_reason": "max_tokens"}
    return _result(
        "ezat/finish/length",
        "FAIL",
        variant={"stream": False},
        reading="max_tokens becomes length",
        violations=[
            {
                "check": "finish_reason",
                "path": "choices[0].finish_reason",
                "expected": "length",
                "actual": "max_tokens",
                "message": "finish_reason 'max_tokens' (not an OpenAI finish_reason at all)",
            },
            {
                "check": "upstream",
                "path": "upstream[0].stop_sequences",
                "expected": ["x"],
                "actual": None,
                "message": "nothing at upstream[0].stop_sequences",
            },
        ],
        exchange={
            "request": {
                "method": "POST",
                "url": "http://gw/v1/chat/completions",
                "headers": {"content-type": "application/json"},
                "body": json.dumps(client),
            },
            "response": {
                "status": 200,
                "headers": {"content-type": "application/json", "x-evil": EVIL},
                "body": json.dumps(answer),
                "transport_error": None,
                "elapsed": 0.05,
                "truncated": False,
            },
            "upstream": [
                {
                    "method": "POST",
                    "path": "/v1/messages",
                    "headers": {"content-type": "application/json"},
                    "body": json.dumps(upstream),
                    "served": {
                        "status": 200,
                        "headers": {"content-type": "application/json"},
                        "body": json.dumps(served),
                        "cassette": "anthropic/max-tokens",
                        "interaction": 0,
                    },
                }
            ],
        },
    )


def _document(results: list[dict[str, Any]], profile: str = "ezat") -> dict[str, Any]:
    totals = dict.fromkeys(
        ("PASS", "FAIL", "WARN", "SKIP", "NOT_APPLICABLE", "HARNESS_ERROR", "XFAIL", "XPASS"), 0
    )
    for r in results:
        totals[r["outcome"]] += 1
    return {
        "suite": {"name": "gateway-conformance", "version": "9.9.9"},
        "profile": {"name": profile, "doc": f"{profile}-chat-completions", "title": f"{profile} router"},
        "target": {
            "gateway_url": "http://127.0.0.1:8080/v1",
            "upstream": "replay",
            "replay_url": "http://127.0.0.1:9100",
            "description": "acme gateway",
        },
        "timings": {"started": 1767225600.0, "finished": 1767225612.5, "duration": 12.5},
        "totals": totals,
        "collection_errors": 0,
        "results": results,
    }


@pytest.fixture
def failing() -> dict[str, Any]:
    return _document(
        [
            _failure(),
            _result("ezat/refuse/n", "PASS"),
            _result("ezat/images/url", "NOT_APPLICABLE", reason="needs loopback-downloads"),
        ]
    )


@pytest.fixture
def passing() -> dict[str, Any]:
    return _document([_result("ezat/refuse/n", "PASS"), _result("ezat/finish/stop", "PASS")])


def test_fixtures_are_valid_results_documents(failing: dict[str, Any], passing: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(json.loads(schema_path("report").read_text()))
    validator.validate(failing)
    validator.validate(passing)


def test_certificate_shows_verdict_target_quote_panes_and_rerun(failing: dict[str, Any]) -> None:
    page = certificate_html([failing])
    assert '<div class="vword">FAIL</div>' in page
    assert "acme gateway" in page and "gateway-conformance 9.9.9" in page
    assert "2026-01-01 00:00 UTC" in page  # from timings.started: the renderer reads no clock
    assert "quote of ezat/finish/length" in page and "Finish reasons" in page
    for pane in ("Client request", "Request sent upstream", "Upstream answer", "Gateway answer"):
        assert pane in page
    assert "anthropic/max-tokens #0" in page  # what the replay served, and from where
    assert "pytest --gateway-url http://gw/v1 --rule ezat/finish/length" in page
    assert 'id="f1"' in page and 'href="#f1"' in page  # the rules table links to the failure


def test_untrusted_bodies_and_headers_are_escaped(failing: dict[str, Any]) -> None:
    page = certificate_html([failing])
    assert "alert" in page
    assert len(re.findall(r"<script", page)) == 1  # ours, and only ours
    assert "&lt;script&gt;alert(" in page


def test_violation_paths_and_by_path_differences_are_marked(failing: dict[str, Any]) -> None:
    page = certificate_html([failing])
    assert re.search(
        r'<span class="ln hit"[^>]*>[^\n]*?finish_reason&quot;</span>: <span class="v">&quot;max_tokens', page
    )
    assert re.search(
        r'<span class="ln added"[^>]*> *<span class="k">&quot;max_tokens&quot;</span>: <[^>]*>5<', page
    )
    assert re.search(r'<span class="ln dropped"[^>]*> *<span class="k">&quot;n&quot;</span>', page)
    assert re.search(
        r'<span class="ln changed" title="the client sent: &quot;claude&quot;">.*?claude-x', page
    )
    assert "← missing: stop_sequences" in page  # a path the violation names but the body lacks


def test_stream_events_named_by_violations_are_marked() -> None:
    failure = _failure()
    failure["violations"] = [
        {
            "check": "stream_order",
            "path": "stream[1].choices[0].finish_reason",
            "expected": "length",
            "actual": "max_tokens",
            "message": "bad finish",
        }
    ]
    failure["exchange"]["response"]["headers"] = {"content-type": "text/event-stream"}
    failure["exchange"]["response"]["body"] = (
        'data: {"choices":[{"delta":{"role":"assistant"}}]}\n\n: ping\n\n'
        'data: {"choices":[{"delta":{},"finish_reason":"max_tokens"}]}\n\ndata: [DONE]\n\n'
    )
    page = certificate_html([_document([failure])])
    assert re.search(r'<span class="ln hit" title="stream event 1"><span class="ev">\[1\]</span>data: ', page)
    assert not re.search(r'class="ln hit"[^>]*><span class="ev">\[0\]', page)


def test_no_upstream_call_and_live_mode_are_said_plainly() -> None:
    none, live = _failure(), _failure()
    none["exchange"]["upstream"] = []
    none["violations"] = [
        {
            "check": "upstream_calls",
            "path": "upstream",
            "expected": 1,
            "actual": 0,
            "message": "the gateway made 0 upstream calls, expected 1",
        }
    ]
    live["exchange"]["upstream"] = None
    page = certificate_html([_document([none, live])])
    assert "The gateway made no upstream request for this case." in page
    assert '<p class="line hit">the gateway made 0 upstream calls, expected 1</p>' in page
    assert "Not observable: no replay upstream (live mode)." in page


@pytest.mark.parametrize(
    ("path", "tokens"),
    [
        ("$.choices[0].finish_reason", ("choices", 0, "finish_reason")),
        ("usage.total_tokens", ("usage", "total_tokens")),
        ("upstream[1].system", ("upstream", 1, "system")),
        ("$", ()),
        ("$['odd key'][*]", ("odd key", "*")),
        ("stream@12", None),
        ("status 500", None),
    ],
    ids=["dollar", "bare", "upstream", "root", "quoted-wildcard", "stream-offset", "not-a-path"],
)
def test_parse_path(path: str, tokens: tuple[Any, ...] | None) -> None:
    assert parse_path(path) == tokens


@pytest.mark.parametrize(
    ("outcomes", "expected_verdict", "color", "text"),
    [
        (["PASS", "PASS", "NOT_APPLICABLE"], "PASS", "#2da44e", "ezat 2/2"),
        (["PASS", "FAIL", "XFAIL"], "FAIL", "#cf222e", "ezat 1/3"),
        (["PASS", "HARNESS_ERROR"], "INCOMPLETE", "#d4a72c", "ezat 1/2 (incomplete)"),
    ],
    ids=["pass", "fail", "incomplete"],
)
def test_badge_is_svg_colored_by_verdict(
    outcomes: list[str], expected_verdict: str, color: str, text: str
) -> None:
    document = _document([_result(f"ezat/a/r{i}", o) for i, o in enumerate(outcomes)])
    assert verdict(document) == expected_verdict
    svg = ET.fromstring(badge_svg([document]))
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    assert [t.text for t in svg.findall(".//s:text", ns)][-1] == text
    assert color in {r.get("fill") for r in svg.findall(".//s:rect", ns)}


def test_badge_and_page_cover_several_profiles(failing: dict[str, Any], passing: dict[str, Any]) -> None:
    other = _document(copy.deepcopy(passing["results"]), profile="lyrouter")
    svg = ET.fromstring(badge_svg([failing, other]))
    assert "ezat 1/2 · lyrouter 2/2" in "".join(svg.itertext())
    page = certificate_html([passing, other])
    assert '<div class="vword">PASS</div>' in page and "lyrouter router" in page
    assert "None: nothing to show." in page


def test_expectation_problems_fail_the_verdict(passing: dict[str, Any]) -> None:
    passing["expectation_problems"] = ["entry 'ezat/gone/*' names no rule"]
    assert verdict(passing) == "FAIL"
    assert "entry &#x27;ezat/gone/*&#x27; names no rule" in certificate_html([passing])


def test_write_reports_writes_summary_certificate_and_badge(tmp_path: Path, failing: dict[str, Any]) -> None:
    write_reports(tmp_path / "out", [failing])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "badge.svg",
        "certificate.html",
        "summary.md",
    ]
    assert (tmp_path / "out" / "summary.md").read_text() == markdown_summary([failing])


def test_report_command_renders_from_results_files(
    tmp_path: Path, failing: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(failing))
    assert cli_main(["report", str(results), "--out", str(tmp_path / "out")]) == 0
    assert "FAIL" in (tmp_path / "out" / "certificate.html").read_text()
    assert "certificate.html" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "not a JSON file"),
        (
            json.dumps({"suite": {"name": "gateway-conformance", "version": "1"}}),
            "not a gateway-conformance results file",
        ),
    ],
    ids=["missing", "not-json", "not-a-results-document"],
)
def test_report_command_on_a_bad_file_exits_3(
    tmp_path: Path, content: str | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    if content is not None:
        results.write_text(content)
    assert cli_main(["report", str(results), "--out", str(tmp_path / "out")]) == 3
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_report_command_without_out_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["report", str(tmp_path / "results.json")]) == 3
    assert "--out" in capsys.readouterr().err


# --- the page in a real browser -------------------------------------------------------------------------


@pytest.fixture
def chromium() -> str:
    if not CHROMIUM.exists():
        pytest.skip(
            "no /usr/bin/chromium (Debian: apt-get install -y chromium): the page is not rendered in a browser"
        )
    return str(CHROMIUM)


def _chromium(binary: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


def test_certificate_renders_in_headless_chromium(
    chromium: str, tmp_path: Path, failing: dict[str, Any]
) -> None:
    write_reports(tmp_path, [failing])
    url = (tmp_path / "certificate.html").as_uri()
    shot = tmp_path / "certificate.png"
    _chromium(chromium, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", url)
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank 1280x2000 page compresses to a few kB
    dom = _chromium(chromium, tmp_path, "--dump-dom", url).stdout
    # Set by the filter script's last line: it ran to the end without throwing, over all three rows.
    assert 'data-filter-ready="3"' in dom
    assert re.search(r'id="shown"[^>]*>3 of 3 shown<', dom)
    assert "<script>alert(" not in dom.split("<script>", 1)[0]


# --- JUnit XML: every test case carries the rule's properties ---------------------------------------------

RULE = """\
source: {doc: ezat-chat-completions, section: Ignored and refused fields}
rules:
  - id: ezat/test/refuse-n
    level: MUST
    title: n above 1 is refused before any upstream call
    source: {quote: "`n` above 1"}
    request: {body: {model: $MODEL, n: 2, messages: [{role: user, content: hi}]}}
    variants: {stream: [false, true]}
    expect: {status: 400, upstream_calls: 0}
"""


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(Path(__file__).parents[2] / "fixtures" / "plugin" / "cassettes") as server:
        yield server


@pytest.mark.e2e
def test_junit_xml_carries_rule_properties(pytester: pytest.Pytester, replay: ReplayServer) -> None:
    pytester.makefile(".yaml", rules=RULE)
    junit = pytester.path / "junit.xml"
    with serve(make_gateway(replay.url)) as gateway:
        # A child process, like certify's: the JUnit file is what CI systems read.
        result = pytester.runpytest_subprocess(
            "-p",
            "no:cacheprovider",
            "--gateway-url",
            f"{gateway}/v1",
            "--gateway-key",
            KEY,
            "--profile",
            "ezat",
            "--replay-url",
            replay.url,
            "--junitxml",
            str(junit),
            "-o",
            "junit_family=xunit2",
            str(pytester.path),
        )
    result.assert_outcomes(passed=2)
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [c.get("name") for c in cases] == [
        "ezat/test/refuse-n[stream=false]",
        "ezat/test/refuse-n[stream=true]",
    ]
    for case in cases:
        props = {p.get("name"): p.get("value") for p in case.findall("./properties/property")}
        assert props["rule_id"] == "ezat/test/refuse-n"
        assert props["level"] == "MUST" and props["profile"] == "ezat" and props["outcome"] == "PASS"
        assert props["section"] == "Ignored and refused fields"


def test_a_catalog_run_on_several_gateway_profiles_is_labelled_by_each() -> None:
    """certify runs profile openai on the reference gateway in each of its profiles: three tables, told apart."""
    from harness.report.text import profile_label

    doc = {
        "profile": {"name": "openai"},
        "target": {"description": "reference gateway (embedded), profile relay"},
    }
    assert profile_label(doc) == "openai@relay"
    assert (
        profile_label(
            {"profile": {"name": "ezat"}, "target": {"description": "reference gateway (embedded)"}}
        )
        == "ezat"
    )
    assert (
        profile_label({"profile": {"name": "ezat"}, "target": {"description": "http://127.0.0.1:8080/v1"}})
        == "ezat"
    )
