"""Live mode's forms: a rule judged against a gateway whose upstream the harness cannot see or script.

Per expectation, not per rule: what the client side can observe is judged; upstream-side expectations are
recorded as not observable; expectations about the scripted answer take a live form (a structural check that
holds for any honest answer, or the rule's `live:` block, which adjusts the request so a real model shows the
behaviour); a rule needing a provoked fault, or with nothing left to judge, is NOT_APPLICABLE with its reason.
Pure: the rule's scripted answers (its cassette's interactions, harness/engine/scripted.py reads them) are
passed in. The repeat loop that runs a form is in harness/engine/run.py, the cost guard in cost.py.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.checks.refs import REF_RE
from harness.exchange import served_status
from harness.spec.model import Rule
from harness.surfaces import chat_completions
from harness.surfaces.base import Surface

CHAT = chat_completions.SURFACE

# (status, body text) of each interaction of the rule's cassette, in order (empty: no cassette, or unreadable).
ScriptedAnswers = tuple[tuple[int, str], ...]

# Expectations only the upstream side can see (what the gateway sent, how often).
NOT_OBSERVABLE = (
    "upstream",
    "upstream_calls",
    "upstream_headers",
    "upstream_schema",
    "upstream_raw",
    "upstream_compare",
    "upstream_path",
    # the provider's answer's headers, each of which must reach the client: live, the provider's answer is not seen
    "forwards_headers",
)
# Two answers of a real model differ, so a stream and a separate non-stream call cannot be compared.
NOT_COMPARABLE = ("stream_matches_nonstream",)
# A small output budget for live requests (cost guard); a rule's `live.body` may set more.
LIVE_MAX_TOKENS = 256
_REASONING_FIELDS = ("reasoning_effort", "enable_thinking", "thinking_budget", "thinking")
# Stop reasons a provider gives only when provoked (a refusal, a paused server tool, a context overflow).
_STOP_FAULT_RE = re.compile(
    r'"(?:stop_reason|finish_reason)"\s*:\s*"(refusal|pause_turn|model_context_window_exceeded|content_filter)"'
)


@dataclass(frozen=True)
class LiveForm:
    """How one rule variant runs live."""

    reason: str | None = None  # NOT_APPLICABLE: why
    rule: Rule | None = None  # the rule as it runs live (request and expectations adjusted)
    judged: tuple[str, ...] = ()  # expectation keys judged live (after live forms)
    not_observable: tuple[str, ...] = ()  # keys the live run cannot see
    structural: tuple[str, ...] = ()  # keys replaced by a structural check
    send_twice: bool = False  # send once to prime (prompt caching), judge the second answer
    max_tokens: int | None = None  # the output bound of each request (None: not bounded by the request)
    prompt_bytes: int = 0  # the size of the request body template (pad_to_bytes when it sets one)
    generic_schema: bool = False  # kept for callers; the generic shape check is implicit in both modes now
    specific_keys: tuple[str, ...] = ()  # judged keys with a check from the rule's sentence (not a live form)
    billable: bool = True  # False: the doc says the gateway refuses it before any provider call

    @property
    def specific(self) -> tuple[str, ...]:
        """Judged keys with a check from the rule's own sentence: not `status`, not a structural live form."""
        return self.specific_keys

    @property
    def judgment(self) -> str:
        """What a live run of this variant judges: `specific` checks from the rule's sentence, `structural`
        checks only (any honest answer meets them), or `shape` (status and the generic shape only)."""
        if self.specific_keys:
            return "specific"
        return "structural" if any(k != "status" for k in self.judged) else "shape"

    @property
    def requests(self) -> int:
        companion = 0  # stream_matches_nonstream is not judged live, so no companion request
        return (2 if self.send_twice else 1) + companion

    @property
    def beyond_status(self) -> bool:
        return any(k != "status" for k in self.judged)

    def coverage(self) -> dict[str, Any]:
        return {
            "judged": list(self.judged),
            "not_observable": list(self.not_observable),
            "structural": list(self.structural),
            "specific": list(self.specific),
            "judgment": self.judgment,
            "adjusted": bool(self.rule is not None and self.rule.live and self.rule.live.get("body")),
        }


# --- scripted answers --------------------------------------------------------------------------------


def provoked_fault(rule: Rule, answers: ScriptedAnswers) -> str | None:
    """Why a rule needs a fault a real provider will not produce on request, or None."""
    upstream = rule.upstream or {}
    fault = upstream.get("fault")
    if fault:
        what = f"HTTP {fault['status']}" if "status" in fault else ", ".join(sorted(fault))
        return f"needs a provoked upstream fault ({what}), which a live provider does not produce on request"
    if upstream.get("pacing"):
        return "needs scripted upstream timing (pacing), which a live provider does not follow"
    for status, text in answers:
        if status >= 400:
            return f"needs a provoked upstream error (the scripted answer is HTTP {status})"
        if "event: error" in text or '"type":"error"' in text.replace(" ", ""):
            return "needs a provoked mid-stream error from the provider"
        found = _STOP_FAULT_RE.search(text)
        if found:
            return f"needs a provoked `{found.group(1)}` answer from the provider"
    return None


def _scripted_literal(value: Any, rule: Rule, answers: ScriptedAnswers) -> bool:
    """A string literal of the rule that comes from the scripted answer: found in its cassette, not in the
    request. Identifier-like wire words (`assistant`, `tool_calls`) are vocabulary, never scripted content."""
    if (
        not isinstance(value, str)
        or len(value) < 3
        or (value.replace("_", "").replace(".", "").isalpha() and value.islower())
    ):
        return False
    if not answers or value in json.dumps(rule.request):
        return False
    needle = json.dumps(value)[1:-1]
    return any(needle in text or value in text for _, text in answers)


# --- live forms of expectations ---------------------------------------------------------------------

_ANSWER_REF = "${answer."
_PATH_LITERAL_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_VALUE_MATCHERS = ("equals", "json_equals", "in_order", "contains", "one_of", "matches")


def _ref_schema(text: str) -> dict[str, Any]:
    whole = REF_RE.fullmatch(text)
    ref = whole.group(1).strip() if whole else ""
    if ref.startswith("answer.usage."):
        return {"type": "integer", "minimum": 0}
    if ref in ("answer.text", "answer.thinking"):
        return {"type": ["string", "null"]}  # an honest answer that only calls tools has no text
    if ref.startswith("answer.tool_uses.") and ref.endswith(".input"):
        return {"type": "object"}  # a Messages tool_use input: the model's own, an object
    return {"type": "string"}


def _arguments_path(path: str) -> bool:
    """Tool-call arguments (a Messages tool_use's input, a Responses function_call's arguments) are the model's to
    choose: their exact text is scripted, their validity is not."""
    return (path.endswith(".arguments") and ("tool_calls" in path or "function_call" in path)) or (
        path.endswith(".input") and "tool_use" in path
    )


def _scripted(value: Any, rule: Rule, answers: ScriptedAnswers) -> bool:
    if isinstance(value, str):
        return _ANSWER_REF in value or _scripted_literal(value, rule, answers)
    if isinstance(value, list):
        return any(_scripted(v, rule, answers) for v in value)
    if isinstance(value, Mapping):
        return any(_scripted(v, rule, answers) for v in value.values())
    return False


def live_assertion(
    assertion: Mapping[str, Any], rule: Rule, answers: ScriptedAnswers
) -> tuple[dict[str, Any] | None, bool]:
    """A path assertion's live form and whether it changed; None when nothing observable is left."""
    out = dict(assertion)
    changed = False
    path = str(assertion.get("path", ""))
    # A filter on the scripted answer's own text (`$[?@…content == "LYRouter is"]`) selects nothing a real
    # model writes: nothing observable is left of it.
    if any(_scripted_literal(a or b, rule, answers) for a, b in _PATH_LITERAL_RE.findall(path)):
        return None, True
    for key in (*_VALUE_MATCHERS, "not_equals", "excludes"):
        if key not in out or not (_scripted(out[key], rule, answers) or _arguments_path(path)):
            continue
        value = out.pop(key)
        changed = True
        if key in ("not_equals", "excludes"):  # what the unseen answer must not be: not observable live
            continue
        if key in ("json_equals", "in_order"):  # JSON text (a call's arguments) or its fragments: strings
            out["schema"] = {"type": "string"}
            continue
        if isinstance(value, Mapping):  # a scripted object: the same keys, any honest values
            out["schema"] = {"type": "object", "required": sorted(value)}
            continue
        sample = value if isinstance(value, str) else next((v for v in value if isinstance(v, str)), "")
        out["schema"] = _ref_schema(sample) if _ANSWER_REF in sample else {"type": "string"}
    # Token counts of a scripted answer: any honest count is a non-negative integer.
    count = out.get("equals")
    if "tokens" in path and isinstance(count, int) and not isinstance(count, bool) and count > 0:
        out.pop("equals")
        out["schema"] = {"type": "integer", "minimum": 0}
        changed = True
    matchers = set(out) - {"path", "stream", "call"}
    return (out if matchers else None), changed


def _live_assertions(items: Sequence[Any], rule: Rule, answers: ScriptedAnswers) -> tuple[list[Any], bool]:
    kept, changed = [], False
    for item in items:
        if isinstance(item, Mapping):
            form, did = live_assertion(item, rule, answers)
            changed |= did
            if form is not None:
                kept.append(form)
        else:
            kept.append(item)
    return kept, changed


def live_usage(expected: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Usage formulas split: those over the gateway's own usage stay; those over `upstream.*` (the scripted
    answer) become the structural `live_usage` form (non-negative integers, total = prompt + completion)."""
    kept = {k: v for k, v in expected.items() if "upstream." not in str(v)}
    structural = [k for k, v in expected.items() if "upstream." in str(v)]
    return kept, structural


def live_expectations(
    rule: Rule, expect: Mapping[str, Any], answers: ScriptedAnswers
) -> tuple[dict[str, Any], list[str], list[str]]:
    """(the expectations judged live, keys not observable live, keys given a structural form)."""
    out: dict[str, Any] = {}
    hidden: list[str] = []
    structural: list[str] = []
    for key, value in expect.items():
        if key in NOT_OBSERVABLE or key in NOT_COMPARABLE:
            hidden.append(key)
        elif key == "cost" and _priced(value):
            # price times the provider's usage: live, the provider's usage is not seen (a model without a price,
            # whose cost must be absent, is judged live: that needs no provider answer)
            hidden.append(key)
        elif key == "usage":
            kept, scripted = live_usage(value)
            if kept:
                out["usage"] = kept
            if scripted:
                out["live_usage"] = scripted
                structural.append("usage")
        elif key in ("json", "chunks") and isinstance(value, list):
            kept_list, changed = _live_assertions(value, rule, answers)
            if kept_list:
                out[key] = kept_list
            if changed:
                structural.append(key)
            if any(_arguments_path(str(a.get("path", ""))) for a in value if isinstance(a, Mapping)):
                out["live_tool_arguments"] = True  # every call names a tool of the request, valid arguments
        elif key == "headers" and isinstance(value, Mapping):
            headers = {}
            for name, matcher in value.items():
                form, changed = (
                    live_assertion(matcher, rule, answers)
                    if isinstance(matcher, Mapping)
                    else (matcher, False)
                )
                if form is not None:
                    headers[name] = {k: v for k, v in form.items() if k != "path"}
                if changed:
                    structural.append("headers")
            if headers:
                out["headers"] = headers
        elif key == "body" and isinstance(value, Mapping):
            form, changed = live_assertion(value, rule, answers)
            if form is not None:
                out["body"] = form
            if changed:
                structural.append("body")
        elif key == "error" and isinstance(value, Mapping) and _scripted(value.get("message"), rule, answers):
            out["error"] = {k: v for k, v in value.items() if k != "message"}
            structural.append("error")
        else:
            out[key] = value
    return out, hidden, structural


def _priced(cost: Any) -> bool:
    """A `cost` expectation about a priced model (the default), as the cost check reads it."""
    return bool(cost.get("priced", True)) if isinstance(cost, Mapping) else bool(cost)


def _merge_body(body: Any, changes: Mapping[str, Any]) -> Any:
    if not isinstance(body, Mapping):
        return body
    merged = {**body}
    for key, value in changes.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _expects_success(expect: Mapping[str, Any]) -> bool:
    status = expect.get("status", 200)
    statuses = status if isinstance(status, list) else [status]
    return all(isinstance(s, int) and served_status(s) for s in statuses)


def _bounded(
    request: Mapping[str, Any], live: Mapping[str, Any], expect: Mapping[str, Any], limits: Sequence[str]
) -> tuple[Mapping[str, Any], int | None]:
    """The cost guard on one request: a small output limit (the surface's field: `max_tokens`, ...) unless the
    rule's live block sets its own."""
    body = request.get("body")
    if not isinstance(body, Mapping):
        return request, None
    field_name = next((f for f in limits[1:] if f in body), limits[0])
    given = body.get(field_name)
    live_body = live.get("body") or {}
    if any(f in live_body for f in limits):
        return request, given if isinstance(given, int) else None
    if not _expects_success(expect) or any(f in body for f in _REASONING_FIELDS):
        return request, given if isinstance(given, int) else None
    if isinstance(given, int) and not isinstance(given, bool) and given <= LIVE_MAX_TOKENS:
        return request, given
    if given is not None and not isinstance(given, int):
        return request, None  # a rule about a malformed max_tokens: leave it as it is
    return {**request, "body": {**body, field_name: LIVE_MAX_TOKENS}}, LIVE_MAX_TOKENS


def live_form(
    rule: Rule, variant: Mapping[str, Any], answers: ScriptedAnswers, surface: Surface = CHAT
) -> LiveForm:
    """How a rule variant runs live on its surface, or why it cannot (LiveForm.reason)."""
    live = dict(rule.live or {})
    if live.get("not_applicable"):
        return LiveForm(reason=f"not runnable live: {live['not_applicable']}")
    fault = None if live.get("body") else provoked_fault(rule, answers)
    if fault:
        return LiveForm(reason=fault)
    expect = rule.expect_for(variant)
    for key, value in (live.get("expect") or {}).items():
        if value is None:
            expect.pop(key, None)
        else:
            expect[key] = value
    judged, hidden, structural = live_expectations(rule, expect, answers)
    # The generic shape of a served chat answer is judged in replay and live alike (harness/surfaces/chat_completions/shape.py,
    # implicit in run_checks): not added here, so live judges nothing replay does not.
    generic_schema = False
    adjusted = dict(rule.request)
    if live.get("body"):
        adjusted["body"] = _merge_body(adjusted.get("body"), live["body"])
    if live.get("send_twice"):
        # A prompt-cache read needs the same bytes on both calls: no case marker (it differs per call, and live
        # mode has no replay upstream to route by it).
        adjusted["marker"] = "none"
    request, max_tokens = _bounded(adjusted, live, judged, surface.output_limit_fields)
    if not judged:
        return LiveForm(
            reason="nothing the client side can observe: " + ", ".join(hidden) + " are not observable live"
        )
    live_rule = dataclasses.replace(
        rule, request=request, expect=judged, when=(), level=str(live.get("level", rule.level))
    )
    specific = specific_keys(expect, judged, structural)
    return LiveForm(
        rule=live_rule,
        judged=tuple(judged),
        not_observable=tuple(hidden),
        structural=tuple(dict.fromkeys(structural)),
        send_twice=bool(live.get("send_twice")),
        max_tokens=max_tokens if _expects_success(judged) else 0,
        prompt_bytes=int(request.get("pad_to_bytes") or len(json.dumps(request.get("body") or ""))),
        generic_schema=generic_schema,
        specific_keys=specific,
        billable=billable(expect),
    )


def billable(expect: Mapping[str, Any]) -> bool:
    """False when the rule's doc says the gateway refuses this request before any provider call."""
    status = expect.get("status", 200)
    statuses = status if isinstance(status, list) else [status]
    refused = bool(statuses) and all(isinstance(s, int) and 400 <= s < 500 for s in statuses)
    return not (refused and expect.get("upstream_calls") == 0)


_STRUCTURAL_FORMS = frozenset({"status", "live_usage", "live_tool_arguments"})


def specific_keys(
    expect: Mapping[str, Any], judged: Mapping[str, Any], structural: Sequence[str]
) -> tuple[str, ...]:
    """The judged keys that still carry a check of the rule's own (not only its structural live form): a key
    given a live form counts when part of it survived as written (an unchanged assertion or header, the
    usage formulas over the gateway's own counts, an error's type and code beside a scripted message)."""
    out = []
    for key, value in judged.items():
        if key in _STRUCTURAL_FORMS:
            continue
        if key not in structural:
            out.append(key)
            continue
        original = expect.get(key)
        if key in ("json", "chunks") and isinstance(value, list) and isinstance(original, list):
            kept = any(item in original for item in value)
        elif key == "headers" and isinstance(value, Mapping) and isinstance(original, Mapping):
            kept = any(
                isinstance(original.get(n), Mapping)
                and {k: v for k, v in original[n].items() if k != "path"} == m
                for n, m in value.items()
            )
        elif key in ("usage", "error"):
            kept = bool(value)
        else:
            kept = value == original
        if kept:
            out.append(key)
    return tuple(out)


__all__ = [
    "LIVE_MAX_TOKENS",
    "NOT_OBSERVABLE",
    "LiveForm",
    "ScriptedAnswers",
    "live_assertion",
    "live_expectations",
    "live_form",
    "live_usage",
    "provoked_fault",
]
