"""The clients x scenarios table (terminal and summary.md) and the verdict per client. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.clients.judge import client_verdict, worst_verdict

MARK = {"PASS": "ok", "FAIL": "FAIL", "NOT_APPLICABLE": "n/a", "SKIP": "skip", "HARNESS_ERROR": "ERROR",
        "XFAIL": "xfail", "XPASS": "XPASS"}  # fmt: skip


def outcomes(document: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """{client: {scenario: outcome}} of one profile's document, in result order."""
    table: dict[str, dict[str, str]] = {}
    for r in document["results"]:
        _, client, scenario = r["rule_id"].split("/", 2)
        table.setdefault(client, {})[scenario] = r["outcome"]
    return table


def verdicts(documents: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each client's verdict over every profile run (the worst of its per-profile verdicts)."""
    per: dict[str, list[str]] = {}
    for doc in documents:
        for client, row in outcomes(doc).items():
            per.setdefault(client, []).append(client_verdict(row))
    return {client: worst_verdict(v) for client, v in per.items()}


def _rows(document: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    table = outcomes(document)
    scenarios = list(next(iter(table.values()), {}).keys())
    rows = [[client, client_verdict(row), *(MARK.get(row.get(s, ""), "?") for s in scenarios)]
            for client, row in table.items()]  # fmt: skip
    return scenarios, rows


def text_table(document: Mapping[str, Any]) -> str:
    scenarios, rows = _rows(document)
    head = ["client", "verdict", *scenarios]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    lines = [f"profile {document['profile']['name']} — {document['target'].get('description', '')}"]
    for r in [head, *rows]:
        lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def failures(document: Mapping[str, Any]) -> list[str]:
    """One line per failing scenario: the client, the scenario, the first thing that went wrong."""
    out = []
    for r in document["results"]:
        if r["outcome"] in ("FAIL", "HARNESS_ERROR"):
            first = r["violations"][0]["message"] if r["violations"] else (r.get("reason") or "")
            out.append(f"{r['rule_id']}: {first[:300]}")
    return out


def markdown_table(document: Mapping[str, Any]) -> list[str]:
    scenarios, rows = _rows(document)
    out = [
        f"### clients through {document['target'].get('description', '')} ({document['profile']['name']})",
        "",
        "| client | verdict | " + " | ".join(scenarios) + " |",
        "|---|---|" + "---|" * len(scenarios),
    ]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    versions = document.get("clients") or {}
    if versions:
        out += ["", "Versions: " + "; ".join(
            f"{c} ({', '.join(f'{p} {v}' for p, v in info['versions'].items())})" for c, info in versions.items()
        )]  # fmt: skip
    na = [r for r in document["results"] if r["outcome"] == "NOT_APPLICABLE" and r.get("reason")]
    for reason in dict.fromkeys(f"`{r['rule_id'].split('/', 2)[2]}`: {r['reason']}" for r in na):
        out.append(f"\n> n/a {reason}")
    fails = failures(document)
    if fails:
        out += ["", *[f"- {f}" for f in fails]]
    return out
