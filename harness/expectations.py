"""Vendor expectations: known failures become XFAIL, and the file cannot rot (XPASS, expired, unmatched fail).

Pure: the caller passes today's date and the rule ids; parsing YAML happens in `load_expectations`.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from harness.errors import ExpectationsError


@dataclass(frozen=True)
class Expectation:
    rule: str
    outcome: str
    reason: str
    variant: Mapping[str, Any] | None = None
    ticket: str | None = None
    expires: date | None = None

    def matches(self, rule_id: str, variant: Mapping[str, Any]) -> bool:
        if not fnmatch.fnmatchcase(rule_id, self.rule):
            return False
        return self.variant is None or all(variant.get(k) == v for k, v in self.variant.items())

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "outcome": self.outcome, "reason": self.reason}
        if self.variant is not None:
            out["variant"] = dict(self.variant)
        if self.ticket:
            out["ticket"] = self.ticket
        if self.expires:
            out["expires"] = self.expires.isoformat()
        return out


@dataclass(frozen=True)
class Expectations:
    profile: str
    entries: tuple[Expectation, ...]

    def find(self, rule_id: str, variant: Mapping[str, Any]) -> Expectation | None:
        return next((e for e in self.entries if e.matches(rule_id, variant)), None)

    def stale(self, rule_ids: Iterable[str], today: date) -> list[str]:
        """Problems that fail the run regardless of outcomes: expired entries and entries naming no rule."""
        ids = list(rule_ids)
        problems = []
        for entry in self.entries:
            if entry.expires is not None and entry.expires < today:
                problems.append(
                    f"expectation for {entry.rule!r} expired on {entry.expires.isoformat()}"
                    f"{' (' + entry.ticket + ')' if entry.ticket else ''}: fix the gateway or renew it"
                )
            if not any(fnmatch.fnmatchcase(rule_id, entry.rule) for rule_id in ids):
                problems.append(f"expectation {entry.rule!r} names no rule of profile {self.profile}")
        return problems


def apply(outcome: str, expectation: Expectation | None) -> str:
    """The final outcome: a failure that was expected is XFAIL; an expected failure that passed is XPASS."""
    if expectation is None:
        return outcome
    if outcome in ("FAIL", "WARN"):
        return "XFAIL"
    if outcome == "PASS":
        return "XPASS"
    return outcome


DRAFT = "TODO"  # what --write-expectations leaves for a human to fill in


def _unedited(data: Any, source: str, *, schema_checked: bool) -> None:
    """A drafted entry nobody edited is bad configuration: say which entry and what to fill in.

    Before the schema check: a field still holding the draft's TODO; after it: an entry with no expiry.
    """
    entries = data.get("expectations") if isinstance(data, Mapping) else None
    for index, raw in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(raw, Mapping):
            continue
        name = f"{source}: expectations/{index} ({raw.get('rule', '?')})"
        for key, what in (("reason", "say why this failure is known"), ("ticket", "give it or delete the line"),
                          ("expires", "set the day after which the entry fails the run, YYYY-MM-DD")):  # fmt: skip
            value = raw.get(key)
            if isinstance(value, str) and value.strip().upper().startswith(DRAFT):
                raise ExpectationsError(f"{name}: {key} is still the draft's TODO: {what}")
        if schema_checked and "expires" not in raw:
            raise ExpectationsError(
                f"{name}: no expires: set expires: YYYY-MM-DD (known failures are fixed by a date, or renewed)"
            )


def _dates_as_text(data: Any) -> Any:
    """`expires: 2027-03-01` as YAML reads it (a date, where the schema asks for its text): the same day as text.
    A YAML timestamp keeps its day."""
    entries = data.get("expectations") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        return data
    fixed = []
    for raw in entries:
        when = raw.get("expires") if isinstance(raw, Mapping) else None
        if isinstance(when, datetime):
            when = when.date()
        fixed.append({**raw, "expires": when.isoformat()} if isinstance(when, date) else raw)
    return {**data, "expectations": fixed}


def parse_expectations(data: Any, source: str, profile: str) -> Expectations:
    import jsonschema

    from harness.paths import schema_path

    data = _dates_as_text(data)
    _unedited(data, source, schema_checked=False)
    schema = json.loads(schema_path("expectations").read_text(encoding="utf-8"))
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path)
    )
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ExpectationsError(f"{source}: at {where}: {err.message}")
    _unedited(data, source, schema_checked=True)
    if data["profile"] != profile:
        raise ExpectationsError(f"{source}: written for profile {data['profile']!r}, running {profile!r}")
    entries = []
    for raw in data["expectations"]:
        expires = None
        if "expires" in raw:
            try:
                expires = date.fromisoformat(raw["expires"])
            except ValueError as exc:
                raise ExpectationsError(
                    f"{source}: {raw['rule']}: expires {raw['expires']!r} is not a date"
                ) from exc
        entries.append(
            Expectation(
                rule=raw["rule"],
                outcome=raw["outcome"],
                reason=raw["reason"],
                variant=raw.get("variant"),
                ticket=raw.get("ticket"),
                expires=expires,
            )
        )
    return Expectations(profile=profile, entries=tuple(entries))


def load_expectations(path: Path, profile: str) -> Expectations:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ExpectationsError(f"{path}: cannot read it: {exc}") from exc
    return parse_expectations(data, str(path), profile)


def from_failures(profile: str, results: Sequence[Mapping[str, Any]], gateway: str) -> dict[str, Any]:
    """An expectations document covering today's failures (for --write-expectations)."""
    entries = []
    for r in results:
        if r["outcome"] in ("FAIL", "WARN"):
            outcome = r["outcome"]
        elif r["outcome"] == "XFAIL":
            outcome = (r.get("expectation") or {}).get("outcome", "FAIL")
        else:
            continue
        first = r["violations"][0]["message"] if r.get("violations") else (r.get("reason") or "")
        entry: dict[str, Any] = {
            "rule": r["rule_id"],
            "outcome": outcome,
            "reason": f"{DRAFT}: why this failure is known ({first[:160]})",
            "ticket": f"{DRAFT}: your tracker's id (optional: delete this line)",
            "expires": f"{DRAFT}: YYYY-MM-DD, the day after which this entry fails the run",
        }
        if r["variant"]:
            entry["variant"] = r["variant"]
        entries.append(entry)
    return {"profile": profile, "gateway": gateway, "expectations": entries}
