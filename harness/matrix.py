"""`gateway-conformance matrix`: every profile's catalog against several gateways, as a rule x gateway table.

The table is built by pure functions from results documents; `main` only runs catalogs through harness.cli.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.report_html import CSS, chip, esc, run_date, short_json, variant_label

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


def _column_status(column: Column) -> str:
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
    out += [f"| {_md(c.name)} | {_md(_column_status(c))} |" for c in columns]
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
        f"<li><b>{esc(c.name)}</b> <span class='muted'>{esc(c.url)}</span><br>{esc(_column_status(c))}</li>"
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


# --- running the catalogs ------------------------------------------------------------------------------


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "gateway"


def reference_model_map(gateway_profile: str, catalog: str) -> str | None:
    """The reference gateway's own ids for another catalog's model roles (`reference_gateway/model_maps/`).

    Found on disk next to the gateway package, never imported: the harness judges it over HTTP only.
    """
    spec = importlib.util.find_spec("reference_gateway")
    if gateway_profile == catalog or spec is None or not spec.submodule_search_locations:
        return None
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "model_maps" / gateway_profile / f"{catalog}.yaml"
    )
    return str(path) if path.is_file() else None


def _run_column(
    name: str,
    url: str,
    catalogs: Sequence[str],
    out_dir: Path,
    key: str | None,
    replay_url: str,
    extra: Sequence[str],
    features: tuple[str, ...],
    model_maps: Mapping[str, str | None] | None = None,
) -> Column:
    from harness.cli import HarnessFailure, Run, run_pytest

    documents, errors = [], {}
    for profile in catalogs:
        run = Run(
            profile=profile,
            gateway_url=url,
            description=name,
            replay_url=replay_url,
            features=features,
            model_map=(model_maps or {}).get(profile),
        )
        print(f"matrix: {name} x {profile} catalog", flush=True)
        try:
            documents.append(run_pytest(run, out_dir / profile, key, extra))
        except HarnessFailure as exc:
            errors[profile] = f"not run: {exc}"
    return Column(name, tuple(documents), errors, url)


def run_matrix(
    out_dir: Path,
    profiles: Sequence[str] | None = None,
    gateways: Mapping[str, str] | None = None,
    reference: bool | None = None,
    rules: Sequence[str] = (),
    key: str | None = None,
    replay_port: int | None = None,
    replay_url: str | None = None,
    workers: int | None = None,
) -> list[Column]:
    """Run the catalogs (profiles with rules) against each gateway; by default the reference in each profile."""
    from harness.cli import (
        ConfigError,
        HarnessFailure,
        embedded_features,
        profiles_with_rules,
        reference_gateway,
        replay_upstream,
    )
    from harness.spec.loader import available_profiles

    # A profile without specs can still name a reference gateway mode (its column then says whether it started).
    selected = list(profiles or available_profiles())
    catalogs = [p for p in profiles_with_rules() if p in selected]
    if not catalogs:
        raise ConfigError(
            f"no selected profile has rules to run ({', '.join(selected)}; profiles with rules: "
            f"{', '.join(profiles_with_rules()) or 'none'})"
        )
    gateways = dict(gateways or {})
    if gateways and replay_port is None and replay_url is None:
        raise ConfigError(
            "--gateway needs the replay upstream at a known address: --replay-port P (point each "
            "gateway's Anthropic base URL at 127.0.0.1:P) or --replay-url URL"
        )
    with_reference = (not gateways) if reference is None else reference
    extra = [a for rule in rules for a in ("--rule", rule)] + (["-n", str(workers)] if workers else [])
    ref_key = "gc-" + secrets.token_hex(16)
    columns: list[Column] = []
    with replay_upstream(replay_port, replay_url) as upstream:
        for profile in selected if with_reference else []:
            name = f"reference ({profile})"
            column_dir = out_dir / _slug(name)
            try:
                with reference_gateway(profile, upstream, ref_key, column_dir / "gateway.log") as url:
                    maps = {catalog: reference_model_map(profile, catalog) for catalog in catalogs}
                    columns.append(
                        _run_column(
                            name,
                            url,
                            catalogs,
                            column_dir,
                            ref_key,
                            upstream,
                            extra,
                            embedded_features(profile),
                            maps,
                        )
                    )
            except HarnessFailure as exc:
                # _run_column catches its own failures: what reaches here is the gateway failing to start.
                lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
                # The first line says what happened, the log's last line usually why.
                why = (
                    "did not start: " + " … ".join(dict.fromkeys([lines[0], lines[-1]]))
                    if lines
                    else "did not start"
                )
                columns.append(Column(name, (), dict.fromkeys(catalogs, why)))
        for name, url in gateways.items():
            columns.append(_run_column(name, url, catalogs, out_dir / _slug(name), key, upstream, extra, ()))
    return columns


def write_matrix(out_dir: Path, columns: Sequence[Column]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "matrix.md").write_text(matrix_markdown(columns), encoding="utf-8")
    (out_dir / "matrix.html").write_text(matrix_html(columns), encoding="utf-8")


def _gateway(text: str) -> tuple[str, str]:
    name, sep, url = text.partition("=")
    if not sep or not name or not url.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"expected NAME=URL (the gateway's OpenAI base URL), got {text!r}")
    return name, url


def main(argv: Sequence[str]) -> int:
    from harness.cli import EXIT_CONFIG, EXIT_HARNESS, EXIT_OK, KEY_ENV, ConfigError, HarnessFailure

    parser = argparse.ArgumentParser(
        prog="gateway-conformance matrix",
        description="Run every profile's catalog against several gateways (default: the embedded reference "
        "gateway started in each profile) and write a rule x gateway table (matrix.html, matrix.md).",
    )
    parser.add_argument(
        "--profiles",
        help="comma-separated profiles: the catalogs to run, and where to start the "
        "reference gateway (default: all)",
    )
    parser.add_argument(
        "--gateway",
        action="append",
        type=_gateway,
        default=[],
        metavar="NAME=URL",
        help="a gateway to compare (repeatable); its upstream must be the replay upstream",
    )
    parser.add_argument(
        "--reference", action="store_true", help="with --gateway: also the reference gateway columns"
    )
    parser.add_argument("--gateway-key", help=f"the --gateway gateways' API key (default: ${KEY_ENV})")
    parser.add_argument("--replay-port", type=int, help="serve the replay upstream on 127.0.0.1:P")
    parser.add_argument("--replay-url", help="use a replay upstream already running")
    parser.add_argument("--rule", action="append", default=[], help="only rules whose id matches this glob")
    parser.add_argument("-n", "--workers", type=int, help="parallel workers per catalog run (pytest-xdist)")
    parser.add_argument("--out", help="where to write (default: ./gc-matrix/<UTC time>)")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return EXIT_CONFIG if exc.code not in (0, None) else EXIT_OK
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    out_dir = Path(args.out or Path("gc-matrix") / stamp).resolve()
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()] if args.profiles else None
    try:
        columns = run_matrix(
            out_dir,
            profiles,
            dict(args.gateway),
            args.reference or None,
            args.rule,
            args.gateway_key or os.environ.get(KEY_ENV),
            args.replay_port,
            args.replay_url,
            args.workers,
        )
    except ConfigError as exc:
        print(f"gateway-conformance matrix: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except HarnessFailure as exc:
        print(f"gateway-conformance matrix: harness failure: {exc}", file=sys.stderr)
        return EXIT_HARNESS
    write_matrix(out_dir, columns)
    rows = matrix_rows(columns)
    print(f"\n{len(rows)} rule variants x {len(columns)} gateways; {sum(r.differs for r in rows)} differ")
    for column in columns:
        print(f"  {column.name}: {_column_status(column)}")
    print(f"matrix: {out_dir / 'matrix.html'}\n        {out_dir / 'matrix.md'}")
    # Differences are the answer, not a failure; only a matrix with nothing in it is.
    return EXIT_OK if any(c.documents for c in columns) else EXIT_HARNESS
