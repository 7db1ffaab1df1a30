"""The kill matrix: run a catalog through each mutant in-process and record which rules kill it.

`run_catalog` is the only part that does I/O (through `harness.engine.run.run_rule`); the matrix itself
is built and rendered by pure functions from the per-mutant results.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

from harness.engine.run import run_rule
from harness.engine.target import Outcome, Target
from harness.mutants.catalog import Mutant, MutantCatalog
from harness.outcomes import variant_label
from harness.replay.client import ReplayClient
from harness.spec import Rule

KILLING = frozenset({"FAIL", "WARN", "HARNESS_ERROR"})
Case = tuple[Rule, dict[str, Any]]


def cases_of(rules: Iterable[Rule]) -> list[Case]:
    """Every rule variant, the slowest first so that threads finish together."""
    cases = [(rule, variant) for rule in rules for variant in rule.variant_combos()]
    return sorted(cases, key=lambda c: -_cost(c[0]))


def _cost(rule: Rule) -> int:
    cost = 0
    if "pad_to_bytes" in rule.request:
        cost += 4
    if "slow" in rule.needs.features:
        cost += 8
    upstream = rule.upstream or {}
    if upstream.get("pacing") or (upstream.get("fault") or {}).get("first_byte_delay"):
        cost += 2
    if rule.expect.get("stream_matches_nonstream"):
        cost += 1
    return cost


def case_key(rule_id: str, variant: Mapping[str, Any]) -> str:
    return f"{rule_id} [{variant_label(variant)}]" if variant else rule_id


def run_catalog(
    cases: Sequence[Case],
    target: Target,
    http: httpx.Client,
    replay: ReplayClient | None,
    jobs: int,
    stop: Callable[[Outcome], bool] | None = None,
) -> list[Outcome]:
    """Run the cases on `jobs` threads; with `stop`, in waves, ending after the wave where stop() held."""

    def one(case: Case) -> Outcome:
        return run_rule(case[0], case[1], target, http, replay)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        if stop is None:
            return list(pool.map(one, cases))
        outcomes: list[Outcome] = []
        for start in range(0, len(cases), max(1, jobs)):
            wave = list(pool.map(one, cases[start : start + max(1, jobs)]))
            outcomes += wave
            if any(stop(o) for o in wave):
                break
        return outcomes


def first_kill_order(cases: Sequence[Case], hints: Sequence[str]) -> list[Case]:
    """The hinted rules (globs over rule ids) first, in hint order; then the rest. Within each rank the
    cheapest first: a wave ends when its slowest case does, and a first kill is a kill, whichever rule finds
    it (`cases` come slowest first, for the full run's threads to finish together)."""

    def rank(case: Case) -> tuple[int, int]:
        for i, pattern in enumerate(hints):
            if fnmatch.fnmatchcase(case[0].id, pattern):
                return i, _cost(case[0])
        return len(hints), _cost(case[0])

    return sorted(cases, key=rank)


# --- pure: results and the matrix ------------------------------------------------------------------


@dataclass(frozen=True)
class Kill:
    rule_id: str
    variant: str
    outcome: str
    detail: str  # the first violation, or the reason of a HARNESS_ERROR


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    kills: tuple[Kill, ...]
    cases_run: int
    seconds: float
    first_kill_only: bool = False
    skipped: str | None = None  # why the mutant was not run
    reused: int = 0  # rule variants it cannot change (harness.mutants.reach): their baseline outcome stands

    @property
    def killers(self) -> tuple[str, ...]:
        return tuple(sorted({k.rule_id for k in self.kills}))

    @property
    def survived(self) -> bool:
        return self.skipped is None and not self.kills

    @property
    def verdict(self) -> str:
        if self.skipped:
            return "NOT_RUN"
        if self.kills:
            return "KILLED" if not self.mutant.survives_because else "KILLED (expected to survive)"
        return "SURVIVED (accepted)" if self.mutant.survives_because else "SURVIVED"


def kills_of(outcomes: Iterable[Outcome], broken: frozenset[str] = frozenset()) -> tuple[Kill, ...]:
    """The killing outcomes, minus rule variants that already fail without a mutant (`broken` case keys)."""
    kills = []
    for o in outcomes:
        key = case_key(o.rule_id, o.variant)
        if o.outcome in KILLING and key not in broken:
            detail = o.violations[0].message if o.violations else o.reason.splitlines()[0] if o.reason else ""
            kills.append(Kill(o.rule_id, variant_label(o.variant), o.outcome, detail[:300]))
    return tuple(kills)


def broken_cases(outcomes: Iterable[Outcome]) -> frozenset[str]:
    return frozenset(case_key(o.rule_id, o.variant) for o in outcomes if o.outcome in KILLING)


@dataclass(frozen=True)
class Matrix:
    profile: str
    results: tuple[MutantResult, ...]
    rules: tuple[str, ...]  # every rule id of the catalog that ran
    not_applicable: tuple[str, ...]  # rules that were not applicable in every run (cannot kill)
    unmutated: Mapping[str, str]
    baseline_broken: tuple[str, ...]
    seconds: float
    complete: bool  # every mutant of the profile ran against every rule (else: no rules-killing-none verdict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if r.survived and not r.mutant.survives_because]

    def idle_rules(self) -> list[str]:
        """Rules that killed no mutant and are not explained in `unmutated`."""
        killing = {k for r in self.results for k in r.killers}
        return [rid for rid in self.rules if rid not in killing and self.why_unmutated(rid) is None]

    def why_unmutated(self, rule_id: str) -> str | None:
        for pattern, why in self.unmutated.items():
            if fnmatch.fnmatchcase(rule_id, pattern):
                return why
        return None


def matrix_json(m: Matrix) -> dict[str, Any]:
    killing: dict[str, list[str]] = {rid: [] for rid in m.rules}
    for r in m.results:
        for rid in r.killers:
            killing.setdefault(rid, []).append(r.mutant.id)
    return {
        "profile": m.profile,
        "seconds": round(m.seconds, 1),
        "complete": m.complete,
        "totals": totals(m),
        "mutants": [
            {
                "id": r.mutant.id,
                "side": r.mutant.side,
                "area": r.mutant.area,
                "title": r.mutant.title,
                "models": r.mutant.models,
                "verdict": r.verdict,
                "killers": list(r.killers),
                "kills": [k.__dict__ for k in r.kills],
                "cases_run": r.cases_run,
                "cases_reused": r.reused,
                "seconds": round(r.seconds, 2),
                "first_kill_only": r.first_kill_only,
                "survives_because": r.mutant.survives_because,
                "skipped": r.skipped,
            }
            for r in m.results
        ],
        "rules": {rid: killing.get(rid, []) for rid in m.rules},
        "not_applicable": list(m.not_applicable),
        "rules_killing_none": m.idle_rules() if m.complete else None,
        "unmutated": {rid: m.why_unmutated(rid) for rid in m.rules if m.why_unmutated(rid)},
        "baseline_broken": list(m.baseline_broken),
        **dict(m.extra),
    }


def result_from_json(raw: Mapping[str, Any], mutant: Mutant) -> MutantResult:
    return MutantResult(
        mutant,
        tuple(Kill(**k) for k in raw.get("kills", ())),
        int(raw.get("cases_run", 0)),
        float(raw.get("seconds", 0.0)),
        first_kill_only=bool(raw.get("first_kill_only")),
        skipped=raw.get("skipped"),
        reused=int(raw.get("cases_reused", 0)),
    )


def merge_matrices(documents: Sequence[Mapping[str, Any]], catalog: MutantCatalog) -> Matrix:
    """One kill matrix from the shards' `kill-matrix.json` documents (one profile; disjoint mutants).

    Complete when the shards together ran every mutant of the profile against every rule, unskipped.
    Raises ValueError on shards that do not fit together (profiles, rules or overlapping mutants).
    """
    if not documents:
        raise ValueError("nothing to merge")
    profiles = {d["profile"] for d in documents}
    if len(profiles) != 1:
        raise ValueError(f"the shards are of different profiles: {', '.join(sorted(profiles))}")
    profile = profiles.pop()
    rule_sets = {tuple(d["rules"]) for d in documents}
    if len(rule_sets) != 1:
        raise ValueError("the shards ran different rules (another catalog version or --rule)")
    globs = {tuple(d.get("rule_globs") or ()) for d in documents}
    by_id = {m.id: m for m in catalog.mutants}
    results: dict[str, MutantResult] = {}
    for d in documents:
        for raw in d["mutants"]:
            if raw["id"] in results:
                raise ValueError(f"mutant {raw['id']} is in more than one shard")
            if raw["id"] not in by_id:
                raise ValueError(f"mutant {raw['id']} is not in this catalog")
            results[raw["id"]] = result_from_json(raw, by_id[raw["id"]])
    order = {m.id: n for n, m in enumerate(catalog.mutants)}
    merged = tuple(sorted(results.values(), key=lambda r: order[r.mutant.id]))
    of_profile = {m.id for m in catalog.mutants if profile in m.profiles}
    complete = (
        set(results) == of_profile
        and globs == {()}
        and not any(d.get("first_kill") for d in documents)
        and not any(r.skipped for r in merged)
    )
    return Matrix(
        profile=profile,
        results=merged,
        rules=rule_sets.pop(),
        not_applicable=tuple(sorted({rid for d in documents for rid in d.get("not_applicable", ())})),
        unmutated=catalog.unmutated,
        baseline_broken=tuple(sorted({b for d in documents for b in d.get("baseline_broken", ())})),
        seconds=max(float(d.get("seconds", 0.0)) for d in documents),
        complete=complete,
        extra={
            "merged_from": [d.get("shard") for d in documents],
            "shard_seconds": [d.get("seconds") for d in documents],
        },
    )


def kill_sets(document: Mapping[str, Any]) -> dict[str, tuple[str, frozenset[tuple[str, str, str]]]]:
    """Per mutant of a `kill-matrix.json`: its verdict and its kills as (rule id, variant, outcome)."""
    return {
        m["id"]: (m["verdict"], frozenset((k["rule_id"], k["variant"], k["outcome"]) for k in m["kills"]))
        for m in document["mutants"]
    }


def diff_kill_sets(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The differences in verdicts and kills between two kill matrices, over the mutants both ran.

    Violation texts and timings are not compared: they carry run-specific ids and durations.
    """
    a, b = kill_sets(before), kill_sets(after)
    problems = []
    for mid in sorted(set(a) & set(b)):
        (va, ka), (vb, kb) = a[mid], b[mid]
        if va != vb:
            problems.append(f"{mid}: verdict {va} -> {vb}")
        problems += [f"{mid}: lost kill {k}" for k in sorted(ka - kb)]
        problems += [f"{mid}: new kill {k}" for k in sorted(kb - ka)]
    return problems


def totals(m: Matrix) -> dict[str, int]:
    ran = [r for r in m.results if not r.skipped]
    killing = {k for r in m.results for k in r.killers}
    return {
        "mutants": len(m.results),
        "run": len(ran),
        "killed": sum(1 for r in ran if r.kills),
        "survived": sum(1 for r in ran if not r.kills),
        "survived_unexplained": len(m.survivors),
        "rules": len(m.rules),
        "rules_killing_some": sum(1 for rid in m.rules if rid in killing),
        "rules_killing_none": len([rid for rid in m.rules if rid not in killing]),
        "rules_unmutated": len([rid for rid in m.rules if rid not in killing and m.why_unmutated(rid)]),
    }


def matrix_text(m: Matrix) -> str:
    lines = [
        f"kill matrix: profile {m.profile}, {len(m.results)} mutants x {len(m.rules)} rules "
        f"in {m.seconds:.0f}s",
        "",
    ]
    width = max((len(r.mutant.id) for r in m.results), default=10)
    for r in m.results:
        note = ", ".join(r.killers[:6]) + (f" (+{len(r.killers) - 6})" if len(r.killers) > 6 else "")
        if r.first_kill_only and r.kills:
            note += " (first kill only)"
        if r.skipped:
            note = r.skipped
        elif not r.kills and r.mutant.survives_because:
            note = "survives because: " + r.mutant.survives_because
        lines.append(f"{r.mutant.id:<{width}}  {r.verdict:<9}  {note}")
    t = totals(m)
    lines += [
        "",
        f"mutants {t['mutants']} (run {t['run']}), killed {t['killed']}, survived {t['survived']} "
        f"({t['survived_unexplained']} unexplained); rules {t['rules']}, killing some {t['rules_killing_some']}, "
        f"killing none {t['rules_killing_none']} ({t['rules_unmutated']} explained in `unmutated`)",
    ]
    if m.baseline_broken:
        lines += [
            "",
            "rule variants that fail without any mutant (ignored as killers):",
            *(f"  {b}" for b in m.baseline_broken),
        ]
    if m.complete:
        idle = m.idle_rules()
        lines += ["", f"rules that kill no mutant: {len(idle) or 'none'}", *(f"  {rid}" for rid in idle)]
    return "\n".join(lines)


def matrix_markdown(m: Matrix) -> str:
    t = totals(m)
    out = [
        f"# Kill matrix — {m.profile}",
        "",
        f"{t['mutants']} mutants, {t['killed']} killed, {t['survived']} survived "
        f"({t['survived_unexplained']} unexplained); {t['rules']} rules, {t['rules_killing_none']} kill no mutant "
        f"({t['rules_unmutated']} explained). Wall time {m.seconds:.0f} s.",
        "",
        "| mutant | side | area | verdict | killed by | models |",
        "|---|---|---|---|---|---|",
    ]
    for r in m.results:
        killers = "<br>".join(f"`{k}`" for k in r.killers) or (r.skipped or r.mutant.survives_because or "—")
        out.append(
            f"| `{r.mutant.id}` | {r.mutant.side} | {r.mutant.area} | {r.verdict} | {killers} | "
            f"{r.mutant.models} |"
        )
    if m.complete:
        out += ["", "## Rules that kill no mutant", ""]
        idle = m.idle_rules()
        out += [f"- `{rid}`" for rid in idle] or ["None."]
        explained = [
            (rid, m.why_unmutated(rid))
            for rid in m.rules
            if rid not in {k for r in m.results for k in r.killers} and m.why_unmutated(rid)
        ]
        if explained:
            out += ["", "## Rules no mutant can make fail (`unmutated`)", ""]
            out += [f"- `{rid}`: {why}" for rid, why in explained]
    return "\n".join(out) + "\n"


def elapsed(started: float) -> float:
    return time.monotonic() - started
