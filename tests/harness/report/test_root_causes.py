"""Root causes, not counts (issue 33): failures the replay refused as the provider would are one cause, said once
with what to change, whatever the gateway answered; they lead the report, the certificate and the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.conformance.report import root_causes
from harness.report.html import certificate_html
from harness.report.patterns import failure_patterns

ROOT = Path(__file__).resolve().parents[3]
REFUSAL = "gateway-conformance replay (validating like the provider): max_tokens: required, a positive integer (got None)"


def _result(i: int, status: int, refusal: str | None) -> dict[str, Any]:
    served = {"status": 400 if refusal else 200, "body": "{}", "cassette": None, "interaction": None}
    if refusal:
        served["provider_refusal"] = refusal
    body = json.dumps({"error": {"message": f"anthropic error {i}", "type": "invalid_request_error"}})
    return {
        "rule_id": f"openai/area/r{i}", "variant": {"stream": bool(i % 2)}, "profile": "openai", "area": "area",
        "level": "MUST", "title": "t", "outcome": "FAIL", "reading": None, "reason": None, "duration": 0.1,
        "source": {"doc": "contract", "section": "s", "quote": "q"}, "rerun": "gateway-conformance certify", "violations": [{"check": "status", "message": "m"}],
        "exchange": {"request": {}, "response": {"status": status, "body": body},
                     "upstream": [{"method": "POST", "path": "/v1/messages", "served": served}]},
    }  # fmt: skip


def _document() -> dict[str, Any]:
    # 12 refused (the gateway answered 400 to some and 500 to others), 3 failing for another reason
    results = [_result(i, 400 if i < 6 else 500, REFUSAL) for i in range(12)]
    results += [_result(100 + i, 200, None) for i in range(3)]
    return {"profile": {"name": "openai"}, "target": {}, "results": results}


def test_a_shared_provider_refusal_is_one_cause_whatever_the_gateway_answered() -> None:
    (first, *rest) = failure_patterns(_document())
    assert first.refusal.startswith("gateway-conformance replay")
    assert first.results == 12 and first.of == 15
    line = first.line()
    assert line.startswith(
        "12 of 15 failures (12 openai rules): the provider refused the request the gateway sent"
    )
    assert "the gateway sent no `max_tokens`" in line
    assert rest == []  # the other 3 are below the group size: not a pattern


def test_the_conformance_report_and_the_certificate_lead_with_it() -> None:
    (cause,) = root_causes(_document())
    assert cause["failures"] == 12 and cause["rules"] == 12 and cause["first_rule"] == "openai/area/r0"
    assert cause["refusal"] == REFUSAL and cause["status"] is None


def test_portkeys_stored_run_reads_as_its_one_fix() -> None:
    """The stored Portkey 1.15.2 run of profile openai (implementations/, peers/certify.sh): nearly every
    failure is the replay refusing a request without max_tokens, and the certificate leads with it."""
    doc = json.loads(
        (ROOT / "implementations/portkey-1.15.2/openai/results.json").read_text(encoding="utf-8")
    )
    first = failure_patterns(doc)[0]
    assert first.refusal and "max_tokens" in first.refusal
    assert first.results > 0.8 * first.of
    page = certificate_html([doc])
    assert page.index("Root causes") < page.index("Totals per area")
    assert "the gateway sent no `max_tokens`" in page
