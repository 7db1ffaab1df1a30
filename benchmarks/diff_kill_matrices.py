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
from typing import Any


def kill_sets(document: dict[str, Any]) -> dict[str, tuple[str, frozenset[tuple[str, str, str]]]]:
    return {
        m["id"]: (m["verdict"], frozenset((k["rule_id"], k["variant"], k["outcome"]) for k in m["kills"]))
        for m in document["mutants"]
    }


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    a, b = kill_sets(before), kill_sets(after)
    problems = []
    for mid in sorted(set(a) & set(b)):
        (va, ka), (vb, kb) = a[mid], b[mid]
        if va != vb:
            problems.append(f"{mid}: verdict {va} -> {vb}")
        for k in sorted(ka - kb):
            problems.append(f"{mid}: lost kill {k}")
        for k in sorted(kb - ka):
            problems.append(f"{mid}: new kill {k}")
    return problems


def main(argv: list[str]) -> int:
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[:2])
    a, b = kill_sets(before), kill_sets(after)
    only = sorted(set(a) ^ set(b))
    problems = diff(before, after)
    kills = sum(len(k) for _, k in a.values() if _ is not None)
    print(f"{len(set(a) & set(b))} mutants in both ({kills} kills before), {len(only)} in one only")
    for mid in only:
        print(f"  only in {'before' if mid in a else 'after'}: {mid}")
    for line in problems:
        print("  " + line)
    print("identical verdicts and kills" if not problems else f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
