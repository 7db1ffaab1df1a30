"""A fuzz run as a results document in certify's format (`specs/schema/report.schema.json`): one result per
invariant in the area `robustness`, the run's figures as a diagnostics entry, the shrunk failure as evidence."""

from __future__ import annotations

import base64
from typing import Any

from harness.fuzz.invariants import Invariant, invariants, style_for

OUTCOMES = ("PASS", "FAIL", "WARN", "SKIP", "NOT_APPLICABLE", "HARNESS_ERROR")
_UPSTREAM_RULES = ("robustness/upstream-json-valid", "robustness/refused-before-upstream")


def _body_text(raw: bytes) -> dict[str, Any]:
    cut = raw[:4000]
    try:
        return {"text": cut.decode("utf-8"), "bytes": len(raw)}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(cut).decode("ascii"), "bytes": len(raw)}


def _result(run: Any, invariant: Invariant, doc: str, examples: int, seed: int) -> dict[str, Any]:
    failure = run.failure
    violations = [v for v in failure.violations if v.rule_id == invariant.rule_id] if failure else []
    outcome, reason = "PASS", None
    if invariant.rule_id == "robustness/healthy-afterwards" and run.healthy is not None:
        violations = [_Violation(invariant.rule_id, run.healthy)]
    if invariant.rule_id in _UPSTREAM_RULES and not run.observed_upstream:
        outcome, reason = (
            "SKIP",
            "the upstream is not observed (give --replay-port, or fuzz the embedded gateway)",
        )
    elif violations:
        outcome = "FAIL" if invariant.level == "MUST" else "WARN"
    elif failure is not None:
        reason = "the run stopped at the first failure (another invariant); this one held until then"
    result: dict[str, Any] = {
        "rule_id": invariant.rule_id,
        "variant": {"examples": examples, "seed": seed},
        "profile": run.profile,
        "area": "robustness",
        "level": invariant.level,
        "title": invariant.title,
        "source": {"doc": doc, "section": invariant.section, "quote": invariant.quote},
        "reading": invariant.reading,
        "outcome": outcome,
        "reason": reason,
        "violations": [{"check": "fuzz", "path": "$", "message": v.message} for v in violations],
        "duration": round(run.finished - run.started, 3),
        "rerun": f"gateway-conformance fuzz --profile {run.profile} --seed {seed} --examples {examples}",
        "diagnostics": [run.figures.as_dict()],
    }
    if violations and failure is not None and invariant.rule_id != "robustness/healthy-afterwards":
        exchange = failure.exchange
        result["exchange"] = {
            "request": {
                "content_type": exchange.case.content_type,
                "kind": exchange.case.kind,
                "note": exchange.case.note,
                "body": _body_text(exchange.case.body),
                "curl": failure.curl,
            },
            "response": {
                "status": exchange.answer.status,
                "content_type": exchange.answer.content_type,
                "body": _body_text(exchange.answer.body),
            },
            "upstream_requests": [_body_text(b) for b in exchange.upstream_bodies or ()],
        }
    return result


class _Violation:
    def __init__(self, rule_id: str, message: str) -> None:
        self.rule_id = rule_id
        self.message = message


def results_document(
    run: Any, *, examples: int, seed: int, replay_url: str | None, description: str
) -> dict[str, Any]:
    """The fuzz run as a results document of its own (the same shape as a catalog run's)."""
    from harness.report.document import results_document as document

    style = style_for(run.profile)
    return document(
        profile={"name": run.profile, "doc": style.doc},
        target={
            "gateway_url": run.gateway_url,
            "upstream": "replay",
            "replay_url": replay_url,
            "description": description,
        },
        results=[_result(run, inv, style.doc, examples, seed) for inv in invariants(style)],
        started=run.started,
        finished=run.finished,
    )
