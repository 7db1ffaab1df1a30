"""The conformance report a vendor publishes (specs/schema/conformance-report.schema.json), built from certify's
results documents, the catalog each profile ran and the implementation's own description; and the internal
consistency of one. Pure: no I/O, no clock, no yaml (harness.conformance.publish reads and writes the files).

Core and extended, as Kubernetes Gateway API's conformance reports: a rule that needs no feature is *core*;
a rule that needs features (`needs.features`, declared with `--feature`) belongs to each *extended feature* it
needs. A profile whose rules need no feature is all core.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from harness.outcomes import OUTCOMES

FORMAT = "gateway-conformance/conformance-report/v1"

Result = Literal["success", "partial", "failure"]
NOT_CLAIMED = "not-claimed"  # an extended feature the implementation did not declare

# How each outcome counts for a level (README "A conformance report"). A declared known failure (XFAIL) and a
# rule that passed only some live repeats (FLAKY) are failures of the rule: an expectations file excuses the
# exit code, not the claim. An XPASS is a rule the gateway passed (the expectations file is what is stale).
BUCKETS: Mapping[str, str] = {
    "PASS": "passed",
    "XPASS": "passed",
    "FAIL": "failed",
    "XFAIL": "failed",
    "FLAKY": "failed",
    "WARN": "warned",
    "NOT_APPLICABLE": "not_judged",
    "SKIP": "not_judged",
    "HARNESS_ERROR": "harness_error",
}
BUCKET_NAMES = ("passed", "failed", "warned", "not_judged", "harness_error")
LEVELS = ("MUST", "SHOULD", "MAY")


@dataclass(frozen=True)
class RuleInfo:
    """What the report needs to know of one catalog rule."""

    level: str
    features: frozenset[str] = frozenset()  # needs.features: the extended features it belongs to
    without: frozenset[str] = frozenset()  # needs.without: it applies only while these are undeclared


@dataclass(frozen=True)
class CatalogDigest:
    """One profile's catalog as the run used it, and its digest (harness.conformance.catalog_hash)."""

    profile: str
    title: str
    doc: str
    features: Mapping[str, str]  # profile.yaml `features`: name -> what declaring it means
    rules: Mapping[str, RuleInfo]
    sha256: str
    files: int


@dataclass(frozen=True)
class Implementation:
    """Who and what was certified; None where the vendor said nothing (never filled in by the suite)."""

    organization: str | None = None
    project: str | None = None
    version: str | None = None
    url: str | None = None
    contact: str | None = None
    # How it was set up for the run (its config, flags, pinned dependencies) and which results depend on that:
    # a vendor tells configuration from behaviour (issue 33). Only in the report when given.
    setup: Mapping[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "organization": self.organization,
            "project": self.project,
            "version": self.version,
            "url": self.url,
            "contact": self.contact,
        }
        if self.setup is not None:
            out["setup"] = dict(self.setup)
        return out


@dataclass(frozen=True)
class Group:
    """The rules of one part of a profile (core, one feature, robustness) and the results that ran them."""

    rules: frozenset[str]
    results: tuple[Mapping[str, Any], ...] = ()
    excluded: int = 0  # core rules that do not apply by declaration (needs.without a declared feature)
    collection_errors: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


# --- the result of a group --------------------------------------------------------------------------------


def statistics(group: Group) -> dict[str, Any]:
    """Counts of one group: rules (catalog) and how many ran, variants by outcome, and per level the buckets."""
    outcomes = {name: 0 for name in OUTCOMES}
    levels: dict[str, dict[str, int]] = {lv.lower(): dict.fromkeys(BUCKET_NAMES, 0) for lv in LEVELS}
    ran: set[str] = set()
    for r in group.results:
        outcomes[r["outcome"]] += 1
        levels[str(r["level"]).lower()][BUCKETS[r["outcome"]]] += 1
        ran.add(str(r["rule_id"]))
    return {
        "rules": len(group.rules),
        "rules_run": len(ran & group.rules),
        "rules_not_run": len(group.rules - ran),
        "rules_excluded": group.excluded,
        "variants": len(group.results),
        "outcomes": outcomes,
        **levels,
    }


def result_of(stats: Mapping[str, Any], collection_errors: int = 0) -> Result:
    """`failure`: a MUST variant failed (FAIL, XFAIL, FLAKY). `success`: no MUST variant failed, every rule of
    the group ran, no MUST variant was left unjudged (NOT_APPLICABLE, SKIP) or hit a harness error, no rule file
    failed to load, and something was judged. `partial`: neither (the claim is not disproved, not proved)."""
    must = stats["must"]
    if must["failed"]:
        return "failure"
    judged = stats["variants"] - sum(
        stats[lv.lower()][b] for lv in LEVELS for b in ("not_judged", "harness_error")
    )
    if (
        stats["rules_not_run"]
        or must["not_judged"]
        or must["harness_error"]
        or collection_errors
        or judged == 0
    ):
        return "partial"
    return "success"


def _entry(group: Group) -> dict[str, Any]:
    stats = statistics(group)
    return {"result": result_of(stats, group.collection_errors), "statistics": stats, **dict(group.extra)}


# --- one profile ------------------------------------------------------------------------------------------


def outcomes_digest(results: Iterable[Mapping[str, Any]]) -> str:
    """sha256 of the run's outcomes, `<rule_id> <variant> <outcome>` per result, sorted: what the report's results
    are derived from, independent of timing and formatting."""
    import hashlib
    import json

    lines = sorted(
        f"{r['rule_id']} {json.dumps(r.get('variant') or {}, sort_keys=True)} {r['outcome']}" for r in results
    )
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def profile_entry(
    document: Mapping[str, Any], catalog: CatalogDigest, kill_matrix: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A profile's part of the report, from its results document and the catalog the run used."""
    declared = frozenset(document["target"].get("features") or ())
    by_rule: dict[str, list[Mapping[str, Any]]] = {}
    robustness: list[Mapping[str, Any]] = []
    for r in document["results"]:
        if r["rule_id"] in catalog.rules:
            by_rule.setdefault(r["rule_id"], []).append(r)
        elif r.get("area") == "robustness":
            robustness.append(r)  # certify's fuzz budget: invariants of the suite, not catalog rules
        else:
            raise ValueError(
                f"profile {catalog.profile}: result for {r['rule_id']}, not a rule of its catalog"
            )

    def results_of(rules: Iterable[str]) -> tuple[Mapping[str, Any], ...]:
        return tuple(r for rid in sorted(rules) for r in by_rule.get(rid, ()))

    core = {rid for rid, info in catalog.rules.items() if not info.features and not info.without & declared}
    excluded = sum(1 for info in catalog.rules.values() if not info.features and info.without & declared)
    errors = int(document.get("collection_errors", 0))
    entry: dict[str, Any] = {
        "name": catalog.profile,
        "title": catalog.title,
        "doc": catalog.doc,
        # Which gateway ran it: one report can hold a catalog run on several (openai on each reference profile).
        "gateway": str(document["target"].get("description") or document["target"]["gateway_url"]),
        "catalog": {"sha256": catalog.sha256, "files": catalog.files},
        "outcomes_sha256": outcomes_digest(document["results"]),
        "declared_features": sorted(declared),
        # The model ids the run sent for each role (a role mapped to null judged nothing).
        "models": dict(document["target"].get("models") or {}),
        "unsupported_features": [],
        "collection_errors": errors,
        "core": _entry(Group(frozenset(core), results_of(core), excluded, errors)),
        "features": {},
    }
    used = {f for info in catalog.rules.values() for f in info.features}
    for feature in sorted(set(catalog.features) | used):
        meaning = catalog.features.get(feature, "")
        of_feature = {rid for rid, info in catalog.rules.items() if feature in info.features}
        if feature not in declared:
            entry["unsupported_features"].append(feature)
            entry["features"][feature] = {
                "claimed": False,
                "result": NOT_CLAIMED,
                "meaning": meaning,
                "rules": len(of_feature),
            }
            continue
        # A rule that also needs an undeclared feature is that feature's, not this one's: it did not run.
        runnable = {rid for rid in of_feature if catalog.rules[rid].features <= declared}
        group = Group(frozenset(runnable), results_of(runnable), collection_errors=errors)
        entry["features"][feature] = {"claimed": True, **_entry(group), "meaning": meaning}
    if robustness:
        ids = frozenset(str(r["rule_id"]) for r in robustness)
        entry["robustness"] = _entry(Group(ids, tuple(robustness)))
    entry["upstream_families"] = _families(document["results"])
    entry["root_causes"] = root_causes(document)
    entry.update(kill_rate(kill_matrix, catalog))
    return entry


def root_causes(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The failures that share one cause (harness/report/patterns.py), largest first: what a vendor fixes."""
    from harness.report.patterns import failure_patterns

    return [
        {
            "failures": p.results,
            "rules": len(p.rules),
            "cause": p.line(),
            "refusal": p.refusal or None,
            "status": p.status,
            "first_rule": p.rules[0],
        }
        for p in failure_patterns(document)
    ]


def _families(results: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """Provider endpoint kind -> how many variants called it; None when no result recorded the upstream."""
    seen: dict[str, int] = {}
    observed = False
    for r in results:
        families = r.get("upstream_families")
        if families is None:
            continue
        observed = True
        for kind in families:
            seen[kind] = seen.get(kind, 0) + 1
    return dict(sorted(seen.items())) if observed else None


def kill_rate(matrix: Mapping[str, Any] | None, catalog: CatalogDigest) -> dict[str, Any]:
    """The profile's mutant kill rate from a `gateway-conformance mutants` kill-matrix.json, or null and why.

    Raises ValueError for a matrix of another profile or of rules this catalog does not have (another catalog
    version): its rate would describe a different suite."""
    if matrix is None:
        return {
            "kill_rate": None,
            "kill_rate_reason": "no kill matrix given (certify --kill-matrix FILE, from `gateway-conformance "
            "mutants`)",
        }
    if matrix.get("profile") != catalog.profile:
        raise ValueError(f"the kill matrix is of profile {matrix.get('profile')!r}, not {catalog.profile!r}")
    unknown = sorted(set(matrix.get("rules") or ()) - set(catalog.rules))
    if unknown:
        raise ValueError(
            f"the kill matrix of {catalog.profile} names rules this catalog does not have ({', '.join(unknown[:3])}"
            f"{', …' if len(unknown) > 3 else ''}): it was made with another catalog"
        )
    totals = matrix["totals"]
    run, killed = int(totals["run"]), int(totals["killed"])
    if run == 0:
        return {"kill_rate": None, "kill_rate_reason": "the kill matrix ran no mutant"}
    return {
        "kill_rate": {
            "rate": round(killed / run, 4),
            "killed": killed,
            "run": run,
            "mutants": int(totals["mutants"]),
            # A slice (--rule, --mutant, a shard, --first-kill) is not the profile's whole matrix: say so.
            "complete": bool(matrix.get("complete")),
            "rules_killing_none": int(totals.get("rules_killing_none", 0)),
        }
    }


# --- the whole report -------------------------------------------------------------------------------------


def build_report(
    documents: Sequence[Mapping[str, Any]],
    catalogs: Mapping[str, CatalogDigest],
    implementation: Implementation,
    kill_matrices: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The conformance report of one certify run (one results document per profile)."""
    if not documents:
        raise ValueError("no results document: nothing to report")
    modes = {d["target"]["upstream"] for d in documents}
    versions = {d["suite"]["version"] for d in documents}
    if len(modes) != 1 or len(versions) != 1:
        raise ValueError("the results documents are of different modes or suite versions: one report each")
    matrices = dict(kill_matrices or {})
    unused = sorted(set(matrices) - {d["profile"]["name"] for d in documents})
    if unused:
        raise ValueError(f"kill matrix given for profile(s) not in this run: {', '.join(unused)}")
    profiles = [
        profile_entry(d, catalogs[d["profile"]["name"]], matrices.get(d["profile"]["name"]))
        for d in documents
    ]
    mode = modes.pop()
    started = min(float(d["timings"]["started"]) for d in documents)
    report: dict[str, Any] = {
        "format": FORMAT,
        "implementation": implementation.as_dict(),
        "date": datetime.fromtimestamp(started, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": {"name": "gateway-conformance", "version": versions.pop()},
        "mode": mode,
        **top_families(profiles, mode),
        "profiles": profiles,
    }
    return report


def top_families(profiles: Sequence[Mapping[str, Any]], mode: str) -> dict[str, Any]:
    per = [p["upstream_families"] for p in profiles]
    if all(f is None for f in per):
        why = (
            "live mode: the gateway talked to real providers the harness does not observe"
            if mode == "live"
            else "the results record no upstream call (a results file older than this field)"
        )
        return {"upstream_families": None, "upstream_families_reason": why}
    return {"upstream_families": sorted({k for f in per if f for k in f})}


# --- consistency ------------------------------------------------------------------------------------------


def inconsistencies(report: Mapping[str, Any]) -> list[str]:
    """What does not add up inside a (schema-valid) report: statistics that do not sum, a result its
    statistics do not give, features listed inconsistently, a kill rate that is not killed/run."""
    problems: list[str] = []
    for p in report["profiles"]:
        name = p["name"]
        errors = int(p["collection_errors"])
        groups = [("core", p["core"], errors)]
        groups += [(f"feature {f}", e, errors) for f, e in p["features"].items() if e["claimed"]]
        if "robustness" in p:
            groups.append(("robustness", p["robustness"], 0))
        for label, entry, errs in groups:
            problems += [f"profile {name}, {label}: {msg}" for msg in _group_problems(entry, errs)]
        declared = set(p["declared_features"])
        for feature, entry in p["features"].items():
            if entry["claimed"] != (feature in declared):
                problems.append(
                    f"profile {name}: feature {feature} claimed={entry['claimed']} but declared "
                    f"features are {sorted(declared)}"
                )
            if not entry["claimed"] and entry["result"] != NOT_CLAIMED:
                problems.append(f"profile {name}: unclaimed feature {feature} has result {entry['result']}")
        unsupported = sorted(f for f, e in p["features"].items() if not e["claimed"])
        if sorted(p["unsupported_features"]) != unsupported:
            problems.append(
                f"profile {name}: unsupported_features {p['unsupported_features']} are not the "
                f"unclaimed features {unsupported}"
            )
        problems += [f"profile {name}: {msg}" for msg in _kill_problems(p)]
    families = [p["upstream_families"] for p in report["profiles"]]
    if report["upstream_families"] is not None:
        union = sorted({k for f in families if f for k in f})
        if report["upstream_families"] != union:
            problems.append(f"upstream_families {report['upstream_families']} are not the profiles' {union}")
    elif any(f is not None for f in families):
        problems.append("upstream_families is null but a profile records some")
    return problems


def _group_problems(entry: Mapping[str, Any], collection_errors: int) -> Iterable[str]:
    stats = entry["statistics"]
    total = sum(stats["outcomes"].values())
    if total != stats["variants"]:
        yield f"outcomes sum to {total}, not variants {stats['variants']}"
    by_level = sum(stats[lv.lower()][b] for lv in LEVELS for b in BUCKET_NAMES)
    if by_level != stats["variants"]:
        yield f"the per-level counts sum to {by_level}, not variants {stats['variants']}"
    for bucket in BUCKET_NAMES:
        want = sum(n for o, n in stats["outcomes"].items() if BUCKETS.get(o) == bucket)
        got = sum(stats[lv.lower()][bucket] for lv in LEVELS)
        if want != got:
            yield f"{bucket}: the levels say {got}, the outcomes {want}"
    if stats["rules_run"] + stats["rules_not_run"] != stats["rules"]:
        yield f"rules_run {stats['rules_run']} + rules_not_run {stats['rules_not_run']} != rules {stats['rules']}"
    expected = result_of(stats, collection_errors)
    if entry["result"] != expected:
        yield f"result {entry['result']}, but its statistics give {expected}"


def _kill_problems(p: Mapping[str, Any]) -> Iterable[str]:
    rate = p.get("kill_rate")
    if rate is None:
        if not p.get("kill_rate_reason"):
            yield "kill_rate is null without a kill_rate_reason"
        return
    if rate["killed"] > rate["run"] or rate["run"] > rate["mutants"]:
        yield f"kill rate: killed {rate['killed']} / run {rate['run']} / mutants {rate['mutants']} do not fit"
    elif rate["run"] and round(rate["killed"] / rate["run"], 4) != rate["rate"]:
        yield f"kill rate {rate['rate']} is not killed/run = {rate['killed']}/{rate['run']}"
