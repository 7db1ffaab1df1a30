"""Diff two kill matrices (`kill-matrix.json`): per mutant its verdict and its kills (rule, variant, outcome).

    python3 benchmarks/diff_kill_matrices.py BEFORE/kill-matrix.json AFTER/kill-matrix.json

Only mutants present in both are compared (say which are not); exit 0 when every shared mutant has the
same verdict and the same kills, 1 otherwise. Violation texts and timings are not compared: they carry
run-specific ids and durations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.mutants.kill import diff_kill_sets, kill_sets


def main(argv: list[str]) -> int:
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[:2])
    a, b = kill_sets(before), kill_sets(after)
    only = sorted(set(a) ^ set(b))
    problems = diff_kill_sets(before, after)
    kills = sum(len(k) for _, k in a.values())
    print(f"{len(set(a) & set(b))} mutants in both ({kills} kills before), {len(only)} in one only")
    for side, ids in (("before", [m for m in only if m in a]), ("after", [m for m in only if m in b])):
        if ids:
            print(f"  only in {side} ({len(ids)}): {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}")
    for line in problems:
        print("  " + line)
    print("identical verdicts and kills" if not problems else f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
