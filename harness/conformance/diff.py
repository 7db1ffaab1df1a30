"""Two runs compared rule variant by rule variant: what changed from A to B, regressions first. Pure: runs in,
changes out (`gateway-conformance diff`, `certify --baseline`); rendered as text, Markdown or JSON.

An outcome is read as one of four states: passed (PASS, XPASS), warned (WARN), failed (FAIL, FLAKY, XFAIL: an
expectations file excuses a failure, it does not make it pass) and not judged (NOT_APPLICABLE, SKIP,
HARNESS_ERROR). A regression is a variant failed in B that was not failed in A, a rule new in B included: a
baseline excuses the failures it had, nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.conformance.runs import Run
from harness.outcomes import variant_label

PASSED = frozenset({"PASS", "XPASS"})
WARNED = frozenset({"WARN"})
FAILED = frozenset({"FAIL", "FLAKY", "XFAIL"})

# The kinds of change in the order a reader needs them: (kind, heading, its word in the summary line).
KINDS: tuple[tuple[str, str, str], ...] = (
    ("regression", "regressions (failed in B, not in A)", "regressions"),
    ("new-warn", "new WARN (a SHOULD rule now failed)", "new WARN"),
    ("harness-error", "harness errors in B (the suite's own fault, not the gateway's)", "harness errors"),
    ("no-longer-judged", "no longer judged (not applicable or skipped in B)", "no longer judged"),
    ("changed-reason", "same outcome, changed reason", "changed reasons"),
    ("improvement", "improvements", "improvements"),
    ("now-judged", "now judged", "now judged"),
    ("added", "rule variants added (not failed)", "added"),
    ("removed", "rule variants removed", "removed"),
)
_RANK = {"failed": 0, "warned": 1, "passed": 2}


def state(outcome: str | None) -> str:
    if outcome in PASSED:
        return "passed"
    if outcome in WARNED:
        return "warned"
    if outcome in FAILED:
        return "failed"
    return "not judged"


@dataclass(frozen=True)
class Change:
    kind: str
    run: str  # the document's label: `openai`, `openai@lyrouter`, `clients:openai`
    rule_id: str
    variant: str
    level: str
    before: str | None  # outcome in A (None: not in A)
    after: str | None
    before_reason: str = ""
    after_reason: str = ""

    @property
    def name(self) -> str:
        return f"{self.rule_id} [{self.variant}]" if self.variant else self.rule_id

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "run": self.run, "rule_id": self.rule_id, "variant": self.variant,
            "level": self.level, "before": self.before, "after": self.after,
            "before_reason": self.before_reason, "after_reason": self.after_reason,
        }  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    changes: tuple[Change, ...]
    unchanged: int
    only_in_a: Mapping[str, int] = field(default_factory=dict)  # a whole catalog run only in A: its variants
    only_in_b: Mapping[str, int] = field(default_factory=dict)
    catalogs: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)  # changed or unknown

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        return self.of("regression")

    def counts(self) -> dict[str, int]:
        return {kind: len(self.of(kind)) for kind, _title, _word in KINDS}


def reason(result: Mapping[str, Any]) -> str:
    """What a result says went wrong, as two runs of the same behaviour say it alike: each kind of violation once
    (check and message, without where in a stream it was), or its reason, with what differs between two runs
    taken out (case markers, ids, times, byte counts)."""
    violations = result.get("violations") or []
    if not violations:
        return normalized(str(result.get("reason") or ""))
    return "; ".join(
        sorted({f"{v.get('check')}: {normalized(str(v.get('message') or ''))}" for v in violations})
    )


def shown_reason(result: Mapping[str, Any]) -> str:
    """The same for a reader: each distinct violation as `path: message` (expected and actual when the message
    is terse), once, with how many times it occurred."""
    violations = result.get("violations") or []
    if not violations:
        return normalized(str(result.get("reason") or ""))
    seen: dict[str, int] = {}
    for v in violations:
        message = normalized(str(v.get("message") or ""))
        path = str(v.get("path") or "")
        terse = len(message) < 30 and (v.get("expected") is not None or v.get("actual") is not None)
        if terse and not isinstance(v.get("expected"), (dict, list)):
            message += f" (expected {json.dumps(v.get('expected'))}, got {json.dumps(v.get('actual'))[:60]})"
        text = message if path in ("", "$", "status") else f"{_INDEX.sub('[]', path)}: {message}"
        seen[text] = seen.get(text, 0) + 1
    return "; ".join(f"{t} (x{n})" if n > 1 else t for t, n in seen.items())


_INDEX = re.compile(r"\[\d+\]")
_VOLATILE = (
    (re.compile(r"\[gc:[^\]#]+#[0-9a-f]+\]"), "[gc:…]"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<id>"),
    (re.compile(r"\b(?=[0-9a-zA-Z_-]*[0-9])[A-Za-z]*_[0-9A-Za-z]{12,}\b"), "<id>"),  # msg_01…, req_…, call_…
    (re.compile(r"\b[0-9a-f]{16,}\b"), "<hex>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b\d{9,}\b"), "<n>"),  # epoch times
    (re.compile(r"\d+(?:\.\d+)?\s?(?:ms|s)\b"), "<duration>"),
    (re.compile(r"\(\d+ bytes\)"), "(… bytes)"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
)


def normalized(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def _key(result: Mapping[str, Any]) -> tuple[str, str]:
    return str(result["rule_id"]), variant_label(result.get("variant") or {})


def _classify(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str | None:
    was = state(before["outcome"]) if before else None
    now = state(after["outcome"]) if after else None
    if after is None:
        return "removed"
    if now == "failed" and was != "failed":
        return "regression"
    if after["outcome"] == "HARNESS_ERROR" and (before is None or before["outcome"] != "HARNESS_ERROR"):
        return "harness-error"
    if now == "warned" and was != "warned" and was not in ("failed",):
        return "new-warn"
    if before is None:
        return "added"
    if was == now:
        if now in ("failed", "warned") and reason(before) != reason(after):
            return "changed-reason"
        return None
    if now == "not judged":
        return "no-longer-judged"
    if was == "not judged":
        return "now-judged"
    return "improvement" if _RANK[str(now)] > _RANK[str(was)] else "regression"


def compare(a: Run, b: Run) -> Comparison:
    """Every rule variant of A and B, matched by run label, rule id and variant."""
    changes: list[Change] = []
    unchanged = 0
    for label in [*a.documents, *(x for x in b.documents if x not in a.documents)]:
        if label not in b.documents or label not in a.documents:
            continue
        old = {_key(r): r for r in a.documents[label]["results"]}
        new = {_key(r): r for r in b.documents[label]["results"]}
        for key in [*old, *(k for k in new if k not in old)]:
            before, after = old.get(key), new.get(key)
            kind = _classify(before, after)
            if kind is None:
                unchanged += 1
                continue
            either = after or before
            assert either is not None
            changes.append(
                Change(
                    kind,
                    label,
                    key[0],
                    key[1],
                    str(either.get("level") or ""),
                    before["outcome"] if before else None,
                    after["outcome"] if after else None,
                    _shown_reason(before),
                    _shown_reason(after),
                )
            )
    order = {kind: i for i, (kind, _title, _word) in enumerate(KINDS)}
    changes.sort(key=lambda c: (order[c.kind], c.run, c.rule_id, c.variant))
    return Comparison(
        a, b, tuple(changes), unchanged,
        only_in_a={x: len(d["results"]) for x, d in a.documents.items() if x not in b.documents},
        only_in_b={x: len(d["results"]) for x, d in b.documents.items() if x not in a.documents},
        catalogs=_catalogs(a, b),
    )  # fmt: skip


def _shown_reason(result: Mapping[str, Any] | None) -> str:
    if result is None or state(result["outcome"]) == "passed":
        return ""
    return shown_reason(result)[:300]


def _catalogs(a: Run, b: Run) -> dict[str, tuple[str | None, str | None]]:
    """Each profile both runs judged whose catalog digest differs, or is not known on one side."""
    names = {str(d["profile"]["name"]) for d in a.documents.values() if d.get("clients") is None}
    names &= {str(d["profile"]["name"]) for d in b.documents.values() if d.get("clients") is None}
    return {
        n: (a.catalogs.get(n), b.catalogs.get(n))
        for n in sorted(names)
        if a.catalogs.get(n) is None or a.catalogs.get(n) != b.catalogs.get(n)
    }


# --- rendering ------------------------------------------------------------------------------------------------


def summary_line(c: Comparison) -> str:
    counts = c.counts()
    parts = [f"{counts[kind]} {word}" for kind, _title, word in KINDS if counts[kind]]
    return ", ".join([*parts, f"{c.unchanged} unchanged"])


def _catalog_lines(c: Comparison) -> list[str]:
    out = []
    for name, (old, new) in c.catalogs.items():
        if old and new:
            out.append(
                f"catalog {name} changed: {old[:12]} → {new[:12]} (rules and cassettes differ between the runs)"
            )
        else:
            missing = " and ".join(side for side, d in (("A", old), ("B", new)) if not d)
            out.append(
                f"catalog {name}: digest not known for {missing} (a results file without its conformance report)"
            )
    if c.a.suites != c.b.suites:
        out.append(f"suite version: {', '.join(c.a.suites)} → {', '.join(c.b.suites)}")
    for label, n in c.only_in_a.items():
        out.append(f"{label}: only in A ({n} rule variants), not compared")
    for label, n in c.only_in_b.items():
        out.append(f"{label}: only in B ({n} rule variants), not compared")
    return out


def _transition(ch: Change) -> str:
    return f"{ch.before or '(absent)'} → {ch.after or '(absent)'}"


def _why(ch: Change) -> str:
    if ch.kind == "changed-reason":
        return f"was: {ch.before_reason} | now: {ch.after_reason}"
    return ch.after_reason or ch.before_reason


def render_text(c: Comparison, limit: int = 40) -> str:
    out = [f"A: {c.a.source}" + (f" ({c.a.date})" if c.a.date else ""),
           f"B: {c.b.source}" + (f" ({c.b.date})" if c.b.date else "")]  # fmt: skip
    out += _catalog_lines(c)
    for kind, title, _word in KINDS:
        found = c.of(kind)
        if not found:
            continue
        out += ["", f"{title}: {len(found)}"]
        for ch in found[:limit]:
            why = _why(ch)[:200]
            out.append(f"  {ch.run}  {ch.name}  {ch.level}  {_transition(ch)}" + (f"  {why}" if why else ""))
        if len(found) > limit:
            out.append(f"  … and {len(found) - limit} more (--format json lists every one)")
    out += ["", f"diff: {summary_line(c)}"]
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(c: Comparison, limit: int = 100) -> str:
    verdict = "**regressions**" if c.regressions else "no regression"
    out = ["# gateway-conformance: what changed", "", f"{verdict}: {summary_line(c)}", "",
           f"- A: `{c.a.source}`" + (f" ({c.a.date})" if c.a.date else ""),
           f"- B: `{c.b.source}`" + (f" ({c.b.date})" if c.b.date else "")]  # fmt: skip
    out += [f"- {_cell(line)}" for line in _catalog_lines(c)]
    for kind, title, _word in KINDS:
        found = c.of(kind)
        if not found:
            continue
        out += ["", f"## {title[0].upper()}{title[1:]}: {len(found)}", "",
                "| run | rule | level | A → B | why |", "|---|---|---|---|---|"]  # fmt: skip
        for ch in found[:limit]:
            out.append(
                f"| {ch.run} | `{_cell(ch.name)}` | {ch.level} | {_transition(ch)} | {_cell(_why(ch)[:300])} |"
            )
        if len(found) > limit:
            out.append(f"\n… and {len(found) - limit} more (`--format json` lists every one).")
    return "\n".join(out) + "\n"


def as_json(c: Comparison) -> dict[str, Any]:
    return {
        "a": {"source": c.a.source, "date": c.a.date, "suite": c.a.suites, "catalogs": dict(c.a.catalogs)},
        "b": {"source": c.b.source, "date": c.b.date, "suite": c.b.suites, "catalogs": dict(c.b.catalogs)},
        "counts": {**c.counts(), "unchanged": c.unchanged},
        "catalogs_changed": {n: {"a": old, "b": new} for n, (old, new) in c.catalogs.items()},
        "only_in_a": dict(c.only_in_a),
        "only_in_b": dict(c.only_in_b),
        "changes": [ch.as_json() for ch in c.changes],
    }


def render(c: Comparison, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(as_json(c), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_markdown(c)
    return render_text(c) + "\n"


def excused(c: Comparison) -> set[tuple[str, str, str]]:
    """(run, rule id, variant) of B's failures that A failed too: what a baseline excuses."""
    out = set()
    for label, document in c.b.documents.items():
        before = c.a.documents.get(label)
        if before is None:
            continue
        old = {_key(r): r for r in before["results"]}
        for r in document["results"]:
            prior = old.get(_key(r))
            if state(r["outcome"]) == "failed" and prior is not None and state(prior["outcome"]) == "failed":
                out.add((label, *_key(r)))
    return out
