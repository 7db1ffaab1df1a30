"""The compatibility matrix: every profile's catalog against several gateways, as a rule x gateway table.

Pure functions from results documents (harness.orchestrate runs the catalogs; `matrix` in harness.cli).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.outcomes import variant_label
from harness.report.assets import CSS
from harness.report.atoms import chip, esc, run_date, short_json

NOT_RUN = (
    "NOT_RUN"  # the gateway could not be judged on this profile's catalog (did not start, pytest failed)
)
ABSENT = ""  # the gateway's run has no such rule variant (filtered out, or an older catalog)


@dataclass(frozen=True)
class Column:
    """One gateway: its results documents (one per catalog profile), and why a catalog has none."""

    name: str
    documents: tuple[Mapping[str, Any], ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)  # catalog profile → why it was not run
    url: str = ""


@dataclass(frozen=True)
class Row:
    profile: str
    rule_id: str
    variant: str
    level: str
    title: str
    cells: tuple[str, ...]  # one outcome per column, NOT_RUN or ABSENT
    notes: tuple[str, ...]  # per column: the first violation, the reason, or why it was not run
    differs: bool


def _note(result: Mapping[str, Any]) -> str:
    violations = result.get("violations") or []
    if violations:
        return str(violations[0].get("message", ""))
    return str(result.get("reason") or "")


def matrix_rows(columns: Sequence[Column]) -> list[Row]:
    """Rows in catalog order (first seen); a row differs when the gateways that ran it disagree."""
    keys: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    lookup: list[dict[tuple[str, str, str], Mapping[str, Any]]] = []
    for column in columns:
        found = {}
        for doc in column.documents:
            for r in doc["results"]:
                key = (str(r["profile"]), str(r["rule_id"]), variant_label(r.get("variant") or {}))
                found[key] = r
                keys.setdefault(key, r)
        lookup.append(found)
    rows = []
    for key, first in keys.items():
        cells, notes = [], []
        for column, found in zip(columns, lookup, strict=True):
            if key[0] in column.errors:
                cells.append(NOT_RUN)
                notes.append(column.errors[key[0]])
            elif key in found:
                cells.append(str(found[key]["outcome"]))
                notes.append(_note(found[key]))
            else:
                cells.append(ABSENT)
                notes.append("")
        # A gateway that was not run says nothing about the rule: it neither agrees nor differs.
        judged = {c for c in cells if c != NOT_RUN}
        rows.append(
            Row(
                key[0],
                key[1],
                key[2],
                str(first["level"]),
                str(first["title"]),
                tuple(cells),
                tuple(notes),
                len(judged) > 1,
            )
        )
    return rows


def column_status(column: Column) -> str:
    if column.documents:
        parts = [
            f"{d['profile']['name']}: {d['totals'].get('PASS', 0)} pass, {d['totals'].get('FAIL', 0)} fail, "
            f"{d['totals'].get('WARN', 0)} warn"
            for d in column.documents
        ]
    else:
        parts = []
    parts += [
        f"{profile}: {why.splitlines()[0] if why else 'not run'}" for profile, why in column.errors.items()
    ]
    return "; ".join(parts) or "no results"


def _dated(columns: Sequence[Column]) -> str:
    documents = [d for c in columns for d in c.documents]
    return run_date(documents) if documents else "no results"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def matrix_markdown(columns: Sequence[Column]) -> str:
    rows = matrix_rows(columns)
    differ = [r for r in rows if r.differs]
    out = [
        "# gateway-conformance matrix",
        "",
        f"{len(rows)} rule variants x {len(columns)} gateways · {len(differ)} differ · {_dated(columns)}",
        "",
        "| gateway | results |",
        "|---|---|",
    ]
    out += [f"| {_md(c.name)} | {_md(column_status(c))} |" for c in columns]
    head = "| rule | variant | " + " | ".join(_md(c.name) for c in columns) + " |"
    rule = "|---|---|" + "---|" * len(columns)

    def line(r: Row) -> str:
        cells = " | ".join(("not run" if c == NOT_RUN else c or "—") for c in r.cells)
        return f"| `{r.rule_id}` | {r.variant} | {cells} |"

    out += ["", f"## Where the gateways differ ({len(differ)})", ""]
    out += (
        [head, rule, *map(line, differ)] if differ else ["Nowhere: every rule variant has the same outcome."]
    )
    out += ["", f"## All rule variants ({len(rows)})", "", head, rule, *map(line, rows), ""]
    return "\n".join(out)


def matrix_html(columns: Sequence[Column]) -> str:
    rows = matrix_rows(columns)
    differ = sum(r.differs for r in rows)
    heads = "".join(f'<th title="{esc(c.url)}">{esc(c.name)}</th>' for c in columns)
    body = []
    for r in rows:
        cells = []
        for cell, note in zip(r.cells, r.notes, strict=True):
            shown = (
                chip(cell)
                if cell not in (NOT_RUN, ABSENT)
                else (
                    '<span class="muted">not run</span>'
                    if cell == NOT_RUN
                    else '<span class="muted">—</span>'
                )
            )
            why = (
                f'<div class="why">{esc(short_json(note, 140))}</div>'
                if note and cell not in ("PASS", NOT_RUN)
                else ""
            )
            cells.append(f'<td title="{esc(note)}">{shown}{why}</td>')
        text = " ".join([r.profile, r.rule_id, r.variant, r.title, *r.cells]).lower()
        body.append(
            f'<tr data-differs="{int(r.differs)}" data-text="{esc(text)}"{" class=differs" if r.differs else ""}>'
            f'<td><code>{esc(r.rule_id)}</code><div class="variant">{esc(r.variant)}</div>'
            f'<div class="why">{esc(r.level)} · {esc(r.title)}</div></td>{"".join(cells)}</tr>'
        )
    gateways = "".join(
        f"<li><b>{esc(c.name)}</b> <span class='muted'>{esc(c.url)}</span><br>{esc(column_status(c))}</li>"
        for c in columns
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'\">"
        f"<title>gateway-conformance matrix</title><style>{CSS}{MATRIX_CSS}</style></head><body>"
        '<header class="top"><div class="facts"><h1>Compatibility matrix</h1>'
        f"<p>{len(rows)} rule variants x {len(columns)} gateways · <b>{differ} differ</b> · {esc(_dated(columns))}</p>"
        f'<ul class="profiles">{gateways}</ul></div></header><main>'
        '<div class="filters" id="filters" hidden><input id="q" type="search" placeholder="filter: rule id, title, '
        'outcome…" aria-label="text filter"><label><input id="d" type="checkbox"> only where the gateways differ'
        '</label><span id="shown" class="muted"></span></div>'
        f'<table class="rules matrix" id="matrix"><thead><tr><th>rule</th>{heads}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></main><script>{MATRIX_SCRIPT}</script></body></html>\n"
    )


MATRIX_CSS = """
.matrix td{white-space:nowrap}.matrix td:first-child{white-space:normal;max-width:520px}
.matrix tr.differs{background:#fff8c5}.matrix tr.differs td:first-child{box-shadow:inset 4px 0 #d4a72c}
.top{border-top-color:#57606a}main{padding-top:16px}
"""

MATRIX_SCRIPT = """
(function () {
  var q = document.getElementById('q'), d = document.getElementById('d');
  var shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#matrix tbody tr'));
  function apply() {
    var text = q.value.toLowerCase().trim(), n = 0;
    rows.forEach(function (row) {
      var ok = (!text || row.getAttribute('data-text').indexOf(text) >= 0) &&
        (!d.checked || row.getAttribute('data-differs') === '1');
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  }
  q.addEventListener('input', apply);
  d.addEventListener('change', apply);
  document.getElementById('filters').hidden = false;
  apply();
  document.body.setAttribute('data-filter-ready', String(rows.length));
})();
"""


def write_matrix(out_dir: Path, columns: Sequence[Column]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "matrix.md").write_text(matrix_markdown(columns), encoding="utf-8")
    (out_dir / "matrix.html").write_text(matrix_html(columns), encoding="utf-8")
