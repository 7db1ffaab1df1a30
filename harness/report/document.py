"""The results document of one profile's run (specs/schema/report.schema.json), built from its results."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness import __version__
from harness.outcomes import count_outcomes


def results_document(
    *,
    profile: Mapping[str, Any],
    target: Mapping[str, Any],
    results: Iterable[Mapping[str, Any]],
    started: float,
    collection_errors: int = 0,
    expectation_problems: Sequence[str] = (),
    finished: float | None = None,
    interrupted: str | None = None,
) -> dict[str, Any]:
    """`profile`: name, doc, title; `target`: gateway_url, upstream, replay_url, models, features, strict;
    `interrupted`: the signal that stopped the run before it judged everything (its results so far, never a pass)."""
    ordered = sorted(results, key=lambda r: (r["rule_id"], json.dumps(r["variant"], sort_keys=True)))
    finished = time.time() if finished is None else finished
    return {
        "suite": {"name": "gateway-conformance", "version": __version__},
        "profile": dict(profile),
        "target": dict(target),
        "timings": {
            "started": started,
            "finished": finished,
            "duration": round(finished - started, 3),
            "rule_seconds": round(sum(r["duration"] for r in ordered), 3),
        },
        "totals": count_outcomes(ordered),
        "collection_errors": collection_errors,
        "expectation_problems": list(expectation_problems),
        "results": [dict(r) for r in ordered],
        **({"interrupted": interrupted} if interrupted else {}),
    }


def write_document(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
