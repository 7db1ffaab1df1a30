"""Turn an outcome into what humans and machines read: a failure text and a JSON result entry."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.engine.target import Outcome
from harness.exchange import Exchange, ReceivedResponse, SentRequest, UpstreamCall
from harness.outcomes import variant_label
from harness.spec.model import Rule
from harness.violation import SHOWN, Violation, cause_first, collapsed

EXCERPT = 2000


def _text(data: bytes, limit: int = EXCERPT) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(text) > limit:
        return text[:limit] + f"\n… ({len(data)} bytes in all)"
    return text


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _headers(headers: Mapping[str, str]) -> str:
    return "\n".join(f"    {k}: {v}" for k, v in sorted(headers.items()))


def _request_text(req: SentRequest) -> str:
    return f"  {req.method} {req.url}\n{_headers(req.headers)}\n\n    {_text(req.body)}"


def _response_text(resp: ReceivedResponse) -> str:
    head = f"  status {resp.status}" if resp.status is not None else "  no response"
    if resp.transport_error:
        head += f" — {resp.transport_error}"
    head += f" ({resp.elapsed:.2f}s{', truncated' if resp.truncated else ''})"
    return f"{head}\n{_headers(resp.headers)}\n\n    {_text(resp.raw)}"


def _upstream_text(calls: tuple[UpstreamCall, ...] | None) -> str:
    if calls is None:
        return "  (not observable: no replay upstream)"
    if not calls:
        return "  (the gateway made no upstream request for this case)"
    parts = []
    for i, call in enumerate(calls):
        where = f"{call.path}?{call.query}" if call.query else call.path
        parts.append(f"  [{i}] {call.method} {where}\n{_headers(call.headers)}\n\n    {_text(call.body)}")
        if call.served is not None:
            parts.append(
                f"      → served {call.served.status} from {served_source(call.served)}"
                f"{'' if call.served.interaction is None else f' #{call.served.interaction}'}"
            )
    return "\n".join(parts)


def served_source(served: Any) -> str:
    """Where the replay upstream's answer to a call came from: a cassette, a fault the rule scripts, its refusal as
    the provider would refuse, or its own diagnostic (no answer scripted for that family, no match: never a fault)."""
    if served.cassette:
        return str(served.cassette)
    if served.fault:
        return "a fault the rule scripts"
    if served.provider_refusal:
        return "the replay's refusal, as the provider would refuse"
    return "the replay upstream's own diagnostic (no provider answer to give)"


def violations(outcome: Outcome) -> list[Violation]:
    """An outcome's violations as people and results files read them: the cause first, repeats folded."""
    return collapsed(cause_first(outcome.violations, outcome.exchange, outcome.diagnostics))


def failure_text(rule: Rule, outcome: Outcome, rerun: str) -> str:
    """The human account of a failed rule: what the doc says, what went wrong, the exchange, how to rerun."""
    lines = [
        f"{outcome.outcome}: {rule.id} [{variant_label(outcome.variant)}] ({rule.level}) — {rule.title}",
        f'  {rule.source.doc} § "{rule.source.section}": "{rule.source.quote}"',
    ]
    if rule.reading:
        lines.append(f"  reading: {rule.reading}")
    if outcome.reason:
        lines.append(f"  {outcome.reason}")
    found = violations(outcome)
    if found:
        lines.append("violations:")
        for v in found[:SHOWN]:
            lines.append(f"  - [{v.check}] {v.path}: {v.message}")
            lines.append(f"      expected: {_short(v.expected)}")
            lines.append(f"      actual:   {_short(v.actual)}")
        if len(found) > SHOWN:
            lines.append(f"  … and {len(found) - SHOWN:,} more (the results file lists them all)")
    ex = outcome.exchange
    if ex is not None:
        lines += [
            "request sent to the gateway:",
            _request_text(ex.request),
            "gateway answer:",
            _response_text(ex.response),
            "upstream requests the gateway made:",
            _upstream_text(ex.upstream),
        ]
    if outcome.diagnostics:
        lines.append("replay upstream diagnostics during this rule (under -n, may include other rules'):")
        lines += [f"  - {_short(d, 500)}" for d in outcome.diagnostics[:SHOWN]]
        if len(outcome.diagnostics) > SHOWN:
            lines.append(
                f"  … and {len(outcome.diagnostics) - SHOWN:,} more (the results file lists them all)"
            )
    lines.append(f"rerun: {rerun}")
    return "\n".join(lines)


def _exchange_json(ex: Exchange | None) -> dict[str, Any] | None:
    if ex is None:
        return None

    def call(c: UpstreamCall) -> dict[str, Any]:
        served = None
        if c.served is not None:
            served = {
                "status": c.served.status,
                "headers": dict(c.served.headers),
                "body": _text(c.served.body, 20000),
                "cassette": c.served.cassette,
                "interaction": c.served.interaction,
                **({"paced_seconds": c.served.paced_seconds} if c.served.paced_seconds else {}),
            }
            if (
                c.served.provider_refusal
            ):  # the replay refused the request as the provider would: a root cause
                served["provider_refusal"] = str(c.served.provider_refusal)
            if c.served.fault:  # a fault the rule scripts, told from the replay's own diagnostic (issue 48)
                served["fault"] = _jsonable(dict(c.served.fault))
        return {
            "method": c.method,
            "path": c.path,
            **({"query": c.query} if c.query else {}),
            "headers": dict(c.headers),
            "body": _text(c.body, 20000),
            "served": served,
        }

    return {
        "request": {
            "method": ex.request.method,
            "url": ex.request.url,
            "headers": dict(ex.request.headers),
            "body": _text(ex.request.body, 20000),
        },
        "response": {
            "status": ex.response.status,
            "headers": dict(ex.response.headers),
            "body": _text(ex.response.raw, 50000),
            "transport_error": ex.response.transport_error,
            "elapsed": round(ex.response.elapsed, 4),
            "truncated": ex.response.truncated,
            # per read: [bytes so far, seconds since sending] (what tells a stream from a buffered answer)
            **(
                {"arrivals": [[n, round(s, 4)] for n, s in ex.response.arrivals]}
                if ex.response.arrivals
                else {}
            ),
        },
        "upstream": None if ex.upstream is None else [call(c) for c in ex.upstream],
    }


def result_json(rule: Rule, outcome: Outcome, rerun: str, nodeid: str = "") -> dict[str, Any]:
    """One entry of results.json (specs/schema/report.schema.json)."""
    failed = outcome.outcome in ("FAIL", "WARN", "HARNESS_ERROR")
    return {
        "rule_id": rule.id,
        "variant": dict(outcome.variant),
        "profile": rule.profile,
        "area": rule.area,
        "level": rule.level,
        "title": rule.title,
        "source": {"doc": rule.source.doc, "section": rule.source.section, "quote": rule.source.quote},
        "reading": rule.reading,
        "outcome": outcome.outcome,
        "reason": outcome.reason or None,
        "violations": [
            {
                "check": v.check,
                "path": v.path,
                "expected": _jsonable(v.expected),
                "actual": _jsonable(v.actual),
                "message": v.message,
            }
            for v in violations(outcome)
        ],
        "duration": round(outcome.duration, 4),
        "nodeid": nodeid,
        "rerun": rerun,
        "exchange": _exchange_json(outcome.exchange) if failed else None,
        "diagnostics": [dict(d) for d in outcome.diagnostics],
        "upstream_families": upstream_families(outcome.exchange),
        **({"live_coverage": dict(outcome.live)} if outcome.live is not None else {}),
    }


def upstream_families(ex: Exchange | None) -> list[str] | None:
    """The provider endpoints the gateway called for this variant (its steps and companion included), by the
    replay upstream's endpoint kinds; None when the upstream side was not observed (live mode, no exchange).
    Kept for every outcome, so a conformance report can say which families a run exercised."""
    from harness.families import endpoint_kind

    if ex is None or ex.upstream is None:
        return None
    exchanges = [ex, *ex.steps, *([ex.companion] if ex.companion is not None else [])]
    kinds = {endpoint_kind(c.path) for e in exchanges for c in e.upstream or ()}
    return sorted(k for k in kinds if k is not None)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)
