"""Judge what a library returned against its scenario, and say a verdict per client. Pure: no I/O.

`judge` yields every violation (like a rule's checks); `client_verdict` turns a client's outcomes into
READY (every judged scenario passed), LIMITED (some failed) or BROKEN (the plain text answer, the least an
application needs, failed — or nothing passed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.clients.observation import Observation
from harness.clients.scenarios import Scenario

READY, LIMITED, BROKEN, NOT_RUN, INCOMPLETE = "READY", "LIMITED", "BROKEN", "NOT RUN", "INCOMPLETE"
BASIC_SCENARIO = "text"


@dataclass(frozen=True)
class ScenarioMismatch:
    check: str
    message: str
    expected: Any = None
    actual: Any = None

    def as_json(self) -> dict[str, Any]:
        return {
            "check": f"clients.{self.check}",
            "path": "$",
            "expected": self.expected,
            "actual": self.actual,
            "message": self.message,
        }


def _tool_results(body: Any) -> list[str]:
    """The tool_use ids the last user message's tool_result blocks answer (Anthropic Messages), the
    tool_call_ids of the trailing tool messages (OpenAI Chat Completions), or the call_ids of the trailing
    function_call_output items (OpenAI Responses)."""
    if isinstance(body, Mapping) and isinstance(body.get("input"), list):
        outputs: list[str] = []
        for item in reversed(body["input"]):
            if not (isinstance(item, Mapping) and item.get("type") == "function_call_output"):
                break
            outputs.insert(0, str(item.get("call_id")))
        return outputs
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return []
    messages = body["messages"]
    last = messages[-1]
    if isinstance(last, Mapping) and last.get("role") == "tool":
        ids: list[str] = []
        for m in reversed(messages):
            if not (isinstance(m, Mapping) and m.get("role") == "tool"):
                break
            ids.insert(0, str(m.get("tool_call_id")))
        return ids
    content = last.get("content") if isinstance(last, Mapping) else None
    if not isinstance(content, list):
        return []
    return [
        str(b.get("tool_use_id"))
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "tool_result"
    ]


def judge(
    scenario: Scenario,
    seen: Observation,
    upstream_bodies: Sequence[Any],
    served: Sequence[int | None] = (),
    family: str | None = None,
) -> Iterator[ScenarioMismatch]:
    """Every way what the library returned (`seen`) and what reached the provider (`upstream_bodies`, the
    JSON bodies in order; `served`, the status the provider answered each with; `family`, the provider family
    the gateway called, whose script's tool ids must come back) differ from what the scenario expects."""
    expect = scenario.expect
    raised = seen.error
    if "error" not in expect and raised is not None:
        yield ScenarioMismatch(
            "raised",
            f"the library raised {raised.cls}"
            + (f" (HTTP {raised.status})" if raised.status else "")
            + f": {raised.message}",
            expected="a result",
            actual={"class": raised.cls, "status": raised.status, "message": raised.message},
        )
    if "error" in expect:
        want = expect["error"]
        if raised is None:
            yield ScenarioMismatch(
                "error",
                f"the library returned instead of raising a {want['kind']} error (text {seen.text!r})",
                expected=dict(want),
                actual=seen.as_json(),
            )
        else:
            if want["kind"] != "any" and raised.kind != want["kind"]:
                yield ScenarioMismatch(
                    "error.kind",
                    f"the library raised {raised.cls} ({raised.kind}), not its {want['kind']} error: "
                    f"{raised.message}",
                    expected=want["kind"],
                    actual=raised.kind,
                )
            if "status" in want and raised.status != want["status"]:
                yield ScenarioMismatch(
                    "error.status",
                    f"{raised.cls} carries status {raised.status}, expected {want['status']}",
                    expected=want["status"],
                    actual=raised.status,
                )
    if raised is None:
        yield from _results(expect, seen)
    yield from _upstream(expect, upstream_bodies, family)
    if "provider_status" in expect and (not served or served[-1] != expect["provider_status"]):
        # The scenario's premise: e.g. the error must come after the provider's stream started (HTTP 200),
        # not be the provider refusing what the gateway sent.
        yield ScenarioMismatch(
            "provider_status",
            f"the provider answered the gateway's request with {served[-1] if served else 'nothing'}, "
            f"not {expect['provider_status']}: the scenario did not happen as scripted",
            expected=expect["provider_status"],
            actual=served[-1] if served else None,
        )


def _results(expect: Mapping[str, Any], seen: Observation) -> Iterator[ScenarioMismatch]:
    if "text" in expect and seen.text != expect["text"]:
        yield ScenarioMismatch(
            "text", f"the library's text is {seen.text!r}", expected=expect["text"], actual=seen.text
        )
    if "tool_calls" in expect:
        got = [{"name": c.name, "arguments": c.arguments} for c in seen.tool_calls]
        want = [dict(c) for c in expect["tool_calls"]]
        if got != want:
            yield ScenarioMismatch(
                "tool_calls", f"the library's tool calls are {got}", expected=want, actual=got
            )
        missing = [c.name for c in seen.tool_calls if not c.id]
        if missing:
            yield ScenarioMismatch("tool_calls.id", f"tool calls without an id: {missing}", actual=missing)
    if "parsed" in expect and (seen.parsed is None or dict(seen.parsed) != dict(expect["parsed"])):
        yield ScenarioMismatch(
            "parsed",
            f"the library's parsed object is {seen.parsed!r}",
            expected=dict(expect["parsed"]),
            actual=seen.parsed,
        )
    if "usage" in expect:
        usage = dict(seen.usage or {})
        wrong = {k: usage.get(k) for k, v in expect["usage"].items() if usage.get(k) != v}
        if wrong:
            yield ScenarioMismatch(
                "usage",
                f"the library's usage is {seen.usage!r}",
                expected=dict(expect["usage"]),
                actual=usage,
            )


def _upstream(
    expect: Mapping[str, Any], bodies: Sequence[Any], family: str | None
) -> Iterator[ScenarioMismatch]:
    if "upstream_calls" in expect and len(bodies) != expect["upstream_calls"]:
        yield ScenarioMismatch(
            "upstream_calls",
            f"the provider received {len(bodies)} request(s), expected {expect['upstream_calls']}",
            expected=expect["upstream_calls"],
            actual=len(bodies),
        )
    ids = expect.get("tool_result_ids")
    if isinstance(ids, Mapping):  # per provider family: the ids that family's script gave
        ids = ids.get(family or "anthropic")
    if ids is not None:
        want = list(ids)
        got = _tool_results(bodies[-1]) if len(bodies) >= 2 else []
        if got != want:
            yield ScenarioMismatch(
                "tool_result_ids",
                "the second turn reached the provider "
                + (f"answering tool ids {got}" if len(bodies) >= 2 else "not at all")
                + f", not the ids the first answer gave ({want})",
                expected=want,
                actual=got,
            )


def client_verdict(outcomes: Mapping[str, str]) -> str:
    """READY / LIMITED / BROKEN from one client's outcomes by scenario id (NOT RUN: nothing judged;
    INCOMPLETE: the harness failed on some and nothing failed)."""
    judged = {s: o for s, o in outcomes.items() if o not in ("NOT_APPLICABLE", "SKIP")}
    if not judged:
        return NOT_RUN
    failed = {s for s, o in judged.items() if o in ("FAIL", "XFAIL")}  # XPASS: it works (the file is stale)
    if judged.get(BASIC_SCENARIO) in ("FAIL", "XFAIL") or all(o != "PASS" for o in judged.values()):
        return BROKEN if failed else INCOMPLETE
    if failed:
        return LIMITED
    if any(o == "HARNESS_ERROR" for o in judged.values()):
        return INCOMPLETE
    return READY


def worst_verdict(verdicts: Sequence[str]) -> str:
    order = (BROKEN, LIMITED, INCOMPLETE, READY, NOT_RUN)
    present = [v for v in order if v in verdicts]
    return present[0] if present else NOT_RUN
