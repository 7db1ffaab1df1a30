"""No secret reaches a report (issue 35): the reference gateway sends its own provider key upstream
(`x-api-key: gc-replay-upstream-key`, harness/orchestrate/embedded.py); a failing rule puts that exchange in every
report format, and none of them holds the key — it is `<UPSTREAM_KEY>` there, as the user's key is `<GATEWAY_KEY>`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.orchestrate.child import replay_upstream
from harness.orchestrate.embedded import reference_gateway
from harness.paths import specs_dir

PROVIDER_KEY = "gc-replay-upstream-key"
GATEWAY_KEY = "gc-planted-gateway-key-0123456789"
PLANTED = """source: {doc: ezat-chat-completions, section: Errors}
rules:
  - id: ezat/zz/planted
    level: MUST
    title: a rule that fails on purpose, so its exchange is in every report
    source: {quote: 'EZAT'}
    upstream: {cassette: anthropic/text-basic}
    request:
      body: {model: $MODEL, messages: [{role: user, content: Hello.}]}
    variants: {stream: [false]}
    expect: {status: 418}
"""


@pytest.mark.e2e
def test_no_report_format_holds_the_gateways_provider_key(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(specs_dir(), specs)
    (specs / "ezat" / "zz-planted.yaml").write_text(PLANTED, encoding="utf-8")
    out = tmp_path / "report"
    with (
        replay_upstream() as replay_url,
        reference_gateway("ezat", replay_url, GATEWAY_KEY, tmp_path / "gw.log") as url,
    ):
        code = cli_main(["certify", "--gateway-url", url, "--gateway-key", GATEWAY_KEY, "--replay-url", replay_url,
                         "--specs-dir", str(specs), "--profile", "ezat", "--rule", "ezat/zz/*", "--report-dir", str(out)])  # fmt: skip
    assert code == 1  # the planted rule fails, so its exchange is in the evidence
    files = {
        p.relative_to(out).as_posix(): p.read_text(encoding="utf-8", errors="replace")
        for p in out.rglob("*")
        if p.is_file()
    }
    formats = {"results.json", "junit.xml", "certificate.html", "summary.md", "conformance-report.yaml"}
    assert formats <= {Path(name).name for name in files}
    for name, text in files.items():
        assert PROVIDER_KEY not in text, f"{name} holds the gateway's provider key"
        assert GATEWAY_KEY not in text, f"{name} holds the user's gateway key"
    results = next(text for name, text in files.items() if name.endswith("results.json"))
    assert "<UPSTREAM_KEY>" in results and "<GATEWAY_KEY>" in results
