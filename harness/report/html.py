"""The self-contained HTML certificate: results documents in, one HTML page out (inline CSS and JS, no network).

Every string that came from a gateway is untrusted: it goes through `esc` and nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import OUTCOME_ORDER, PROBLEMS, overall_verdict, variant_label, verdict
from harness.report import live as live_report
from harness.report.assets import CSS, LEGEND, SCRIPT
from harness.report.atoms import chip, esc, run_date, short_json
from harness.report.panes import panes_html
from harness.violation import SHOWN

VERDICT_TEXT = {
    "PASS": "every rule as expected",
    "FAIL": "unexpected failures",
    "INCOMPLETE": "the harness itself failed on some rules: the verdict is incomplete",
    "UNJUDGED": "nothing judged (or less than was asked: a model role mapped to nothing): not a pass",
    "INTERRUPTED": "interrupted before every rule was judged: what was judged so far, not a verdict",
}


def _result_key(result: Mapping[str, Any]) -> str:
    variant = variant_label(result.get("variant") or {})
    return f"{result['rule_id']}[{variant}]" if variant else str(result["rule_id"])


def _violations_html(result: Mapping[str, Any]) -> str:
    violations = result.get("violations") or []
    if not violations:
        return ""
    more = len(violations) - SHOWN
    violations = violations[:SHOWN]
    rows = "".join(
        f"<tr><td><code>{esc(v.get('check', ''))}</code></td><td><code>{esc(v.get('path', ''))}</code></td>"
        f"<td>{esc(v.get('message', ''))}</td><td><code>{esc(short_json(v.get('expected')))}</code></td>"
        f"<td><code>{esc(short_json(v.get('actual')))}</code></td></tr>"
        for v in violations
    )
    return (
        '<table class="violations"><thead><tr><th>check</th><th>path</th><th>what went wrong</th>'
        f"<th>expected</th><th>actual</th></tr></thead><tbody>{rows}</tbody></table>"
        + (f'<p class="muted">… and {more:,} more: the results file lists them all.</p>' if more > 0 else "")
    )


# Failures shown with their four panes; past this many, each is its quote and violations (its exchange is in the
# results file): a run that fails everything stays a page a browser opens (issue 48).
PANED = 200


def failure_html(result: Mapping[str, Any], anchor: str, panes: bool = True) -> str:
    source = result["source"]
    parts = [
        f'<article class="failure" id="{esc(anchor)}">',
        f"<h3>{chip(result['outcome'])} <code>{esc(_result_key(result))}</code> "
        f'<span class="level">{esc(result["level"])}</span> <span class="ftitle">{esc(result["title"])}</span></h3>',
        f'<blockquote class="quote"><p>“{esc(source["quote"])}”</p>'
        f"<footer>{esc(source['doc'])} § {esc(source['section'])}</footer></blockquote>",
    ]
    if result.get("reading"):
        parts.append(f'<p class="reading"><b>Reading:</b> {esc(result["reading"])}</p>')
    if result.get("reason"):
        parts.append(f'<p class="reason">{esc(result["reason"])}</p>')
    expectation = result.get("expectation")
    if isinstance(expectation, Mapping):
        parts.append(
            f'<p class="reason">Expectations file: <code>{esc(short_json(dict(expectation)))}</code></p>'
        )
    parts.append(_violations_html(result))
    parts.append(
        panes_html(result)
        if panes
        else f'<p class="muted">Its exchange is in the results file (the first {PANED} failures show theirs).</p>'
    )
    parts.append(
        f'<p class="rerun-label">Rerun just this rule:</p><pre class="cmd">{esc(result["rerun"])}</pre>'
    )
    parts.append("</article>")
    return "".join(parts)


def _area_table(document: Mapping[str, Any]) -> str:
    areas: dict[str, dict[str, int]] = {}
    for r in document["results"]:
        counts = areas.setdefault(r["area"], {})
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    shown = [
        o
        for o in OUTCOME_ORDER
        if any(c.get(o) for c in areas.values()) or o in ("PASS", "FAIL", "WARN", "NOT_APPLICABLE")
    ]
    shown = [
        o
        for o in ("PASS", "FAIL", "WARN", "NOT_APPLICABLE", "HARNESS_ERROR", "XFAIL", "XPASS", "SKIP")
        if o in shown
    ]
    head = "".join(f"<th>{chip(o)}</th>" for o in shown)
    rows = []
    for area, counts in [*sorted(areas.items()), ("all", document["totals"])]:
        total = sum(counts.get(o, 0) for o in shown) or 1
        bar = "".join(
            f'<span class="o-{o}" style="width:{100 * counts.get(o, 0) / total:.2f}%"></span>'
            for o in shown
            if counts.get(o, 0)
        )
        cells = "".join(
            f'<td class="num{" zero" if not counts.get(o, 0) else ""}">{counts.get(o, 0)}</td>' for o in shown
        )
        cls = ' class="all"' if area == "all" else ""
        rows.append(
            f'<tr{cls}><th scope="row">{esc(area)}</th>{cells}<td class="barcell">'
            f'<div class="bar">{bar}</div></td></tr>'
        )
    return (
        f'<table class="areas"><thead><tr><th>area</th>{head}<th></th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _rules_table(documents: Sequence[Mapping[str, Any]], anchors: Mapping[tuple[int, int], str]) -> str:
    rows = []
    ordered = [(d, n, r) for d, doc in enumerate(documents) for n, r in enumerate(doc["results"])]
    # Problems first, then the rest in catalog order: a reader opens a certificate to see what failed.
    ordered.sort(key=lambda item: OUTCOME_ORDER.index(item[2]["outcome"]))
    for d, n, r in ordered:
        key = _result_key(r)
        anchor = anchors.get((d, n))
        link = f' <a href="#{esc(anchor)}">details</a>' if anchor else ""
        text = " ".join(
            [key, r["profile"], r["area"], r["level"], r["title"], r["source"]["section"], r["outcome"]]
        ).lower()
        first = (r.get("violations") or [{}])[0].get("message") or r.get("reason") or ""
        rows.append(
            f'<tr data-outcome="{esc(r["outcome"])}" data-problem="{int(r["outcome"] in PROBLEMS)}" '
            f'data-text="{esc(text)}"><td>{_outcome_chip(r)}</td><td><code>{esc(r["rule_id"])}</code>'
            f'<div class="variant">{esc(variant_label(r.get("variant") or {}))}</div></td>'
            f"<td>{esc(r['level'])}</td><td>{esc(r['profile'])} / {esc(r['area'])}</td>"
            f'<td>{esc(r["title"])}{link}<div class="why">{esc(short_json(first, 160)) if first else ""}</div></td>'
            f'<td class="num">{float(r["duration"]):.2f}s</td></tr>'
        )
    present = sorted({r["outcome"] for d in documents for r in d["results"]}, key=OUTCOME_ORDER.index)
    options = "".join(f'<option value="{esc(o)}">{esc(o.replace("_", " "))}</option>' for o in present)
    return (
        '<div class="filters" id="filters" hidden><input id="q" type="search" placeholder="filter rules: id, title, '
        'area, section…" aria-label="text filter"><select id="o" aria-label="outcome filter">'
        f'<option value="all">all outcomes</option><option value="problems">problems only</option>{options}'
        '</select><span id="shown" class="muted"></span></div>'
        '<table class="rules" id="rules"><thead><tr><th>outcome</th><th>rule</th><th>level</th><th>area</th>'
        f"<th>what it checks</th><th>time</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _outcome_chip(result: Mapping[str, Any]) -> str:
    """The outcome chip; a live PASS that judged no specific check says so (its own class, not a plain PASS),
    and a live result names what was not observable."""
    word = live_report.pass_word(result)
    if word == result["outcome"]:
        out = chip(result["outcome"])
    else:
        out = f'<span class="chip o-NOT_APPLICABLE" title="live: no check of the rule\'s own was judged">{esc(word)}</span>'
    hidden = live_report.not_observable(result)
    if hidden:
        out += f'<div class="variant">not observable live: {esc(", ".join(hidden))}</div>'
    return out


def _throwaway(url: str) -> bool:
    """A loopback URL of a server the run started and stopped (the embedded reference gateway): not a target."""
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def run_seconds(documents: Sequence[Mapping[str, Any]]) -> float:
    """The run's wall time: first start to last finish (profiles run one after another; not their sum)."""
    spans = [
        (float(d["timings"]["started"]), float(d["timings"]["started"]) + float(d["timings"]["duration"]))
        for d in documents
        if d["timings"].get("started") is not None
    ]
    if not spans:
        return sum(float(d["timings"]["duration"]) for d in documents)
    return max(end for _, end in spans) - min(start for start, _ in spans)


def _header(documents: Sequence[Mapping[str, Any]]) -> str:
    overall = overall_verdict(documents)
    targets = sorted({d["target"].get("description") or d["target"]["gateway_url"] for d in documents})
    urls = sorted(
        {d["target"]["gateway_url"] for d in documents if not _throwaway(d["target"]["gateway_url"])}
        - set(targets)
    )
    profiles = "".join(
        f'<li><b>{esc(d["profile"]["name"])}</b> {chip(verdict(d))} <span class="muted">'
        f"{esc(d['profile'].get('title') or '')} ({esc(d['profile']['doc'])})</span></li>"
        for d in documents
    )
    versions = ", ".join(sorted({str(d["suite"]["version"]) for d in documents}))
    upstream = ", ".join(sorted({str(d["target"]["upstream"]) for d in documents}))
    duration = run_seconds(documents)
    strict = any(d["target"].get("strict") for d in documents)
    features = sorted({f for d in documents for f in d["target"].get("features") or []})
    facts = [
        (
            "Target",
            esc(", ".join(targets)) + (f' <span class="muted">{esc(", ".join(urls))}</span>' if urls else ""),
        ),
        ("Suite", f"gateway-conformance {esc(versions)}"),
        ("Date", f"{esc(run_date(documents))} <span class='muted'>({duration:.1f}s)</span>"),
        (
            "Upstream",
            esc(upstream)
            + (" · strict" if strict else "")
            + (f" · features: {esc(', '.join(features))}" if features else ""),
        ),
    ]
    facts += [("Live", esc(live_report.statement(d))) for d in documents if live_report.is_live(d)]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    text = VERDICT_TEXT[overall]
    if any(live_report.is_live(d) for d in documents):  # never a big green PASS for what live could not judge
        rows = [dict(live_report.coverage_rows(d))["(all)"] for d in documents if live_report.is_live(d)]
        counts = {c: sum(r[c] for r in rows) for c in live_report.COLUMNS}
        text = (
            f"{text} ({live_report.VERDICT_NOTE}): {counts['specific']} variants judged with specific checks, "
            f"{counts['structural']} structural only, {counts['shape']} status and shape only, "
            f"{counts['not_live']} not runnable live or not sent"
        )
        overall_word = f"{overall} (live)"
    else:
        overall_word = overall
    return (
        f'<header class="top v-{overall}"><div class="verdict"><div class="vword">{esc(overall_word)}</div>'
        f'<div class="vtext">{esc(text)}</div></div>'
        f'<div class="facts"><h1>Conformance certificate</h1><dl>{dl}</dl>'
        f'<ul class="profiles">{profiles}</ul></div></header>'
    )


def _live_table(document: Mapping[str, Any]) -> str:
    if not live_report.is_live(document):
        return ""
    head = "".join(f"<th>{esc(live_report.LABELS[c])}</th>" for c in live_report.COLUMNS)
    rows = "".join(
        f"<tr><td>{esc(area)}</td>" + "".join(f"<td>{counts[c]}</td>" for c in live_report.COLUMNS) + "</tr>"
        for area, counts in live_report.coverage_rows(document)
    )
    return (
        "<h4>Live coverage: what each result judged</h4>"
        f'<table class="areas"><tr><th>area</th>{head}</tr>{rows}</table>'
    )


def _run_problems(document: Mapping[str, Any]) -> str:
    items = [esc(p) for p in document.get("expectation_problems") or []]
    if document.get("collection_errors"):
        items.insert(
            0, f"{int(document['collection_errors'])} rule file(s) could not be collected (see junit.xml)"
        )
    if not items:
        return ""
    return (
        '<div class="runproblems"><b>The run itself needs attention:</b><ul>'
        + "".join(f"<li>{i}</li>" for i in items)
        + "</ul></div>"
    )


def _known_failures(documents: Sequence[Mapping[str, Any]]) -> str:
    """XFAIL results with the expectations entry that declared them: reason, ticket, expiry."""
    rows = []
    for doc in documents:
        for r in doc["results"]:
            if r["outcome"] != "XFAIL":
                continue
            e = r.get("expectation") or {}
            rows.append(
                f"<tr><td><code>{esc(_result_key(r))}</code></td><td>{esc(e.get('reason') or '')}</td>"
                f"<td>{esc(e.get('ticket') or '')}</td><td>{esc(e.get('expires') or '')}</td></tr>"
            )
    if not rows:
        return ""
    return (
        f'<section><h2>Known failures <span class="count">{len(rows)}</span></h2>'
        '<p class="muted">Declared in the vendor\'s expectations file: they do not fail the run until they '
        'pass or expire.</p><table class="rules"><thead><tr><th>rule</th><th>reason</th><th>ticket</th>'
        f"<th>expires</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _root_causes(documents: Sequence[Mapping[str, Any]]) -> str:
    """The failures that share one cause, largest group first (harness/report/patterns.py), ahead of the list."""
    from harness.report.patterns import failure_patterns

    items = [p for doc in documents for p in failure_patterns(doc)]
    if not items:
        return ""
    rows = "".join(
        f'<li>{esc(p.line())} <span class="muted">(first: <code>{esc(p.rules[0])}</code>)</span></li>'
        for p in items
    )
    return (
        f'<section><h2>Root causes <span class="count">{len(items)}</span></h2><p class="muted">Failures that '
        "share one cause, each said once: fix these first.</p>"
        f"<ul>{rows}</ul></section>"
    )


def certificate_html(documents: Sequence[Mapping[str, Any]]) -> str:
    """The whole certificate page for one run (one results document per profile)."""
    anchors: dict[tuple[int, int], str] = {}
    failures: list[str] = []
    for d, doc in enumerate(documents):
        for n, result in enumerate(doc["results"]):
            if result["outcome"] in PROBLEMS:
                anchors[(d, n)] = f"f{len(anchors) + 1}"
                failures.append(failure_html(result, anchors[(d, n)], panes=len(failures) < PANED))
    overall = overall_verdict(documents)
    names = ", ".join(d["profile"]["name"] for d in documents)
    areas = "".join(
        f'<div class="areabox"><h3>{esc(d["profile"]["name"])} {chip(verdict(d))}</h3>{_run_problems(d)}'
        f"{_area_table(d)}{_live_table(d)}</div>"
        for d in documents
    )
    failure_section = (
        f'<section><h2>Failures <span class="count">{len(failures)}</span></h2>{LEGEND}{"".join(failures)}</section>'
        if failures
        else '<section><h2>Failures</h2><p class="muted">None: nothing to show.</p></section>'
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No network at all: even a stray URL inside a gateway body can never be fetched.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<title>gateway-conformance {esc(overall)} — {esc(names)}</title><style>{CSS}</style></head><body>"
        f"{_header(documents)}<main>"
        f"{_root_causes(documents)}"
        f'<section><h2>Totals per area</h2><div class="areagrid">{areas}</div></section>'
        f"<section><h2>Rules</h2>{_rules_table(documents, anchors)}</section>"
        f"{failure_section}{_known_failures(documents)}</main>"
        f'<footer class="foot">Generated by gateway-conformance from {len(documents)} results document(s). '
        "Everything on this page is in this one file.</footer>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
