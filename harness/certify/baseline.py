"""What surrounds one certify run (harness/certify/command.py): a report folder of its own (harness/report/folder.py),
and, with `--baseline RUN`, the run judged against an earlier one: only a regression fails it.

A baseline is how a team adopts the suite on a gateway that does not pass yet: the failures the earlier run had are
excused (as an expectations file excuses its entries, without one to write), anything that failed now and did not
then is a regression (a rule new in this catalog included), and what improved is said too. The comparison is
harness/conformance/diff.py; it is written beside the report (`baseline.md`, `baseline.json`) and appended to
`summary.md` for the pull-request comment. Harness errors, configuration errors and a run that judged nothing keep
their exit codes: a baseline excuses a gateway's failures, not the suite's.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.conformance.diff import Comparison
from harness.conformance.runs import Run, load_run
from harness.outcomes import EXIT_FAILURES, EXIT_OK, count_outcomes, exit_code

JUDGED = (EXIT_OK, EXIT_FAILURES)


def certify(args: argparse.Namespace) -> int:
    """certify in a report folder of its own; with `args.baseline`, judged against that run."""
    from harness.certify.command import certify as run_certify
    from harness.report.folder import fresh_report_dir

    given = getattr(args, "baseline", None)
    baseline = load_run(given) if given else None  # a baseline that is not a run: exit 3 before anything runs
    with fresh_report_dir(args.report_dir, "gc-report") as report_dir:
        args.report_dir = str(report_dir)
        code = run_certify(args)
    if baseline is None:
        return code
    return judge(baseline, load_run(report_dir), code, report_dir)


def judge(baseline: Run, current: Run, code: int, report_dir: Path) -> int:
    """The run's exit code against `baseline`: its failures that the baseline had are excused."""
    from harness.conformance.diff import compare, excused, render

    comparison = compare(baseline, current)
    (report_dir / "baseline.md").write_text(render(comparison, "markdown"), encoding="utf-8")
    (report_dir / "baseline.json").write_text(render(comparison, "json"), encoding="utf-8")
    summary = report_dir / "summary.md"
    if summary.is_file():
        section = render(comparison, "markdown").replace(
            "# gateway-conformance: what changed", "# Against the baseline", 1
        )
        summary.write_text(summary.read_text(encoding="utf-8") + "\n" + section, encoding="utf-8")
    forgiven = excused(comparison)
    judged = [_excusing(label, document, forgiven) for label, document in current.documents.items()]
    against = exit_code(judged)
    print()
    print(_text(comparison, len(forgiven)))
    if code not in JUDGED:  # the harness failed, or nothing was judged: not the gateway's, not excusable
        return code
    print(
        "verdict against the baseline: "
        + (
            f"{len(comparison.regressions)} regression(s)"
            if comparison.regressions
            else "no regression" + (f" ({len(forgiven)} failure(s) as in the baseline)" if forgiven else "")
        )
        + (
            ""
            if against != EXIT_FAILURES or comparison.regressions
            else "; the expectations file fails the run"
        )
    )
    return against


def _excusing(label: str, document: Mapping[str, Any], forgiven: set[tuple[str, str, str]]) -> dict[str, Any]:
    """`document` with the failures the baseline had counted as declared (XFAIL), for the exit code only."""
    from harness.outcomes import variant_label

    results = [
        {**r, "outcome": "XFAIL"}
        if (label, str(r["rule_id"]), variant_label(r.get("variant") or {})) in forgiven
        else r
        for r in document["results"]
    ]
    return {**document, "results": results, "totals": count_outcomes(results)}


def _text(c: Comparison, forgiven: int, limit: int = 20) -> str:
    from harness.conformance.diff import render_text, summary_line

    head = f"against the baseline {c.a.source}: {summary_line(c)}"
    if not c.changes and not c.catalogs:
        return head
    body = render_text(c, limit=limit).splitlines()[2:-2]  # its A/B lines and closing line are the head's
    return "\n".join([head, *body]) + (f"\n(baseline.md and baseline.json in the report folder; {forgiven} "
                                       "failure(s) excused as the baseline had them)")  # fmt: skip
