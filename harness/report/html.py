"""The self-contained HTML certificate: results documents in, one HTML page out (inline CSS and JS, no network).

Every string that came from a gateway is untrusted: it goes through `esc` and nowhere else.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, cast

from harness.outcomes import OUTCOME_ORDER, PROBLEMS, overall_verdict, variant_label, verdict
from harness.sse import decode

VERDICT_TEXT = {
    "PASS": "every rule as expected",
    "FAIL": "unexpected failures",
    "INCOMPLETE": "the harness itself failed on some rules: the verdict is incomplete",
}

Path = tuple[str | int, ...]
WILD = "*"


def esc(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def short_json(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def run_date(documents: Sequence[Mapping[str, Any]]) -> str:
    """When the run started, from the documents' own timings (the renderer reads no clock)."""
    started = min(float(d["timings"]["started"]) for d in documents)
    return datetime.fromtimestamp(started, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def chip(outcome: str) -> str:
    return f'<span class="chip o-{esc(outcome)}">{esc(outcome.replace("_", " "))}</span>'


# --- JSON paths named by violations -------------------------------------------------------------------

_TOKEN = re.compile(r"""\.([A-Za-z_$][\w$-]*)|\[(\d+|\*)\]|\[['"]([^'"]*)['"]\]|\.\*""")


def parse_path(path: str) -> Path | None:
    """`$.choices[0].message`, `upstream[1].system`, `usage.total_tokens` → tokens; None if not a JSON path."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    if text and text[0] not in ".[":
        text = "." + text
    tokens: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        name, index, quoted = m.group(1), m.group(2), m.group(3)
        if name is not None:
            tokens.append(name)
        elif index is not None:
            tokens.append(WILD if index == "*" else int(index))
        elif quoted is not None:
            tokens.append(quoted)
        else:
            tokens.append(WILD)
        pos = m.end()
    return tuple(tokens)


@dataclass
class Marks:
    """What to mark in one pane: violation targets, and the by-path comparison with the client request."""

    hits: list[Path] = field(default_factory=list)
    headers: set[str] = field(default_factory=set)
    status: bool = False
    events: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)  # violations about this side as a whole (e.g. call count)
    added: set[Path] = field(default_factory=set)
    dropped: set[Path] = field(default_factory=set)
    changed: dict[Path, str] = field(default_factory=dict)


def violation_marks(violations: Iterable[Mapping[str, Any]]) -> dict[str | int, Marks]:
    """Sort violation paths into panes: "response" (the gateway's answer) or an upstream call index."""
    panes: dict[str | int, Marks] = {"response": Marks(), "upstream": Marks()}
    for v in violations:
        check, path = str(v.get("check", "")), str(v.get("path", ""))
        if check in ("headers", "upstream_headers"):
            panes["upstream" if check == "upstream_headers" else "response"].headers.add(path.lower())
            continue
        if check == "status" or path == "status":
            panes["response"].status = True
            continue
        tokens = parse_path(path)
        if tokens is None:
            continue
        if tokens[:1] == ("upstream",):
            if len(tokens) > 1 and isinstance(tokens[1], int):
                panes.setdefault(tokens[1], Marks()).hits.append(tokens[2:])
            else:
                panes["upstream"].notes.append(str(v.get("message", "")))
        elif tokens[:1] == ("stream",) and len(tokens) > 1 and isinstance(tokens[1], int):
            panes["response"].events.add(tokens[1])
        else:
            panes["response"].hits.append(tokens)
    return panes


def compare(client: Any, upstream: Any, path: Path, into_client: Marks, into_upstream: Marks) -> None:
    """By JSON path only: a translating gateway renames fields, so this says "not at the same path", no more."""
    if isinstance(client, dict) and isinstance(upstream, dict):
        for key in upstream:
            if key not in client:
                into_upstream.added.add((*path, key))
            else:
                compare(client[key], upstream[key], (*path, key), into_client, into_upstream)
        for key in client:
            if key not in upstream:
                into_client.dropped.add((*path, key))
    elif isinstance(client, list) and isinstance(upstream, list):
        if len(client) == len(upstream):
            for i, (c, u) in enumerate(zip(client, upstream, strict=True)):
                compare(c, u, (*path, i), into_client, into_upstream)
    elif client != upstream or type(client) is not type(upstream):
        into_upstream.changed[path] = short_json(json.dumps(client, ensure_ascii=False), 120)


def _matches(path: Path, pattern: Path) -> bool:
    return len(path) == len(pattern) and all(p in (WILD, q) for p, q in zip(pattern, path, strict=True))


def _resolve_hits(value: Any, hits: Sequence[Path]) -> tuple[list[Path], dict[Path, list[str]]]:
    """Hits that exist in the document, and for the others the nearest existing ancestor and what is missing."""
    present: list[Path] = []
    missing: dict[Path, list[str]] = {}
    for pattern in hits:
        node, walked = value, cast(Path, ())
        for i, token in enumerate(pattern):
            if token == WILD:
                present.append(pattern)  # wildcards: trust _matches to find every instance
                break
            nxt = _child(node, token)
            if nxt is _MISSING:
                rest = "".join(f"[{t}]" if isinstance(t, int) else f".{t}" for t in pattern[i:])
                missing.setdefault(walked, []).append(rest.lstrip("."))
                break
            node, walked = nxt, (*walked, token)
        else:
            present.append(pattern)
    return present, missing


_MISSING = object()


def _child(node: Any, token: str | int) -> Any:
    if isinstance(node, dict) and isinstance(token, str):
        return node.get(token, _MISSING)
    if isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node):
        return node[token]
    return _MISSING


# --- rendering bodies ---------------------------------------------------------------------------------


def _line(text: str, cls: str = "", title: str = "") -> str:
    attrs = f' class="ln {cls}"' if cls else ' class="ln"'
    if title:
        attrs += f' title="{esc(title)}"'
    return f"<span{attrs}>{text}</span>"


def json_html(value: Any, marks: Marks) -> str:
    present, missing = _resolve_hits(value, marks.hits)
    out: list[str] = []

    def own_class(path: Path) -> tuple[str, str]:
        if any(_matches(path, p) for p in present):
            return "hit", "named by a violation"
        if path in marks.added:
            return "added", "not in the client's request at this path"
        if path in marks.dropped:
            return "dropped", "not in the upstream request at this path"
        if path in marks.changed:
            return "changed", f"the client sent: {marks.changed[path]}"
        return "", ""

    def walk(node: Any, path: Path, indent: int, key: str, comma: str, inherited: str) -> None:
        cls, title = own_class(path)
        cls = inherited or cls
        pad = "  " * indent
        head = f'{pad}<span class="k">{esc(json.dumps(key, ensure_ascii=False))}</span>: ' if key else pad
        note, first_cls, first_title = "", cls, title
        if path in missing:
            # Only this line: what is missing is not its children's fault.
            note = f' <span class="note">← missing: {esc(", ".join(missing[path]))}</span>'
            first_cls = cls or "hit"
            first_title = title or "a violation names a path under here that is not in the document"
        if isinstance(node, (dict, list)) and node:
            opening, closing = ("{", "}") if isinstance(node, dict) else ("[", "]")
            out.append(_line(f"{head}{opening}{note}", first_cls, first_title))
            items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            for i, (k, child) in enumerate(items):
                walk(
                    child,
                    (*path, k),
                    indent + 1,
                    k if isinstance(node, dict) else "",
                    "," if i < len(items) - 1 else "",
                    cls if cls in ("hit", "added", "dropped") else "",
                )
            out.append(_line(f"{pad}{closing}{comma}", cls, title))
        else:
            scalar = esc(json.dumps(node, ensure_ascii=False))
            out.append(_line(f'{head}<span class="v">{scalar}</span>{comma}{note}', first_cls, first_title))

    walk(value, (), 0, "", "", "hit" if () in present else "")
    return "".join(out)


def _parse_json(text: str) -> tuple[bool, Any]:
    # Bodies longer than the evidence limit end in "\n… (N bytes in all)": that part is not JSON.
    for candidate in (text, re.sub(r"\n… \(\d+ bytes in all\)$", "", text)):
        try:
            return True, json.loads(candidate)
        except ValueError:
            continue
    return False, None


def _looks_like_sse(text: str, headers: Mapping[str, str]) -> bool:
    ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    return "event-stream" in ctype or text.startswith(("data:", "event:", ":"))


def sse_html(text: str, marks: Marks) -> str:
    """Raw SSE, one block per event (numbered as the checks number them, comments excluded)."""
    raw = text.encode("utf-8")
    stream = decode(raw)
    starts = sorted(
        [(e.offset, f"[{e.index}]", e.index) for e in stream.events]
        + [(c.offset, "", -1) for c in stream.comments]
    )
    if not starts or starts[0][0] > 0:
        starts.insert(0, (0, "", -1))
    out = []
    for n, (offset, label, index) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(raw)
        block = raw[offset:end].decode("utf-8", errors="replace").rstrip("\n")
        if not block:
            continue
        cls = "hit" if index in marks.events else ""
        title = f"stream event {index}" if index >= 0 else ""
        for i, line in enumerate(block.split("\n")):
            gutter = f'<span class="ev">{esc(label) if i == 0 else ""}</span>'
            out.append(_line(gutter + esc(line), cls, title))
    return "".join(out)


def body_html(text: str | None, headers: Mapping[str, str], marks: Marks) -> str:
    if text is None or text == "":
        return '<p class="muted">(empty body)</p>'
    if _looks_like_sse(text, headers):
        return f'<pre class="body">{sse_html(text, marks)}</pre>'
    ok, value = _parse_json(text)
    if ok:
        return f'<pre class="body">{json_html(value, marks)}</pre>'
    cls = "hit" if () in marks.hits else ""
    return f'<pre class="body">{_line(esc(text), cls)}</pre>'


def headers_html(headers: Mapping[str, str], marks: Marks) -> str:
    if not headers:
        return ""
    lines = "".join(
        _line(f'<span class="k">{esc(k)}</span>: {esc(v)}', "hit" if k.lower() in marks.headers else "")
        for k, v in sorted(headers.items())
    )
    named = [h for h in marks.headers if h not in {k.lower() for k in headers}]
    missing = f'<p class="line hit">missing header(s): {esc(", ".join(sorted(named)))}</p>' if named else ""
    opened = " open" if marks.headers else ""
    return (
        f'<details class="headers"{opened}><summary>{len(headers)} headers</summary>'
        f'<pre class="body">{lines}</pre>{missing}</details>'
    )


# --- the four panes -----------------------------------------------------------------------------------


def _pane(number: str, title: str, side: str, area: str, content: str) -> str:
    return (
        f'<section class="pane {area}"><h4><span class="pn">{number}</span> {esc(title)} '
        f'<span class="side">{esc(side)}</span></h4>{content}</section>'
    )


def _diff_note(marks: Marks) -> str:
    parts = []
    if marks.added:
        parts.append(f'<span class="m-added">+{len(marks.added)} not in the client request</span>')
    if marks.changed:
        parts.append(f'<span class="m-changed">~{len(marks.changed)} changed</span>')
    if marks.dropped:
        parts.append(f'<span class="m-dropped">\u2212{len(marks.dropped)} not sent upstream</span>')
    return (
        f'<p class="diffnote">{" · ".join(parts)} <span class="muted">(by JSON path)</span></p>'
        if parts
        else ""
    )


def panes_html(result: Mapping[str, Any]) -> str:
    """Client request → gateway → upstream request → upstream answer → gateway answer, marked."""
    exchange = result.get("exchange")
    if not isinstance(exchange, Mapping):
        return '<p class="muted">No exchange was recorded for this result.</p>'
    marks = violation_marks(result.get("violations") or [])
    request = exchange.get("request") or {}
    response = exchange.get("response") or {}
    upstream = exchange.get("upstream")
    client_marks = Marks()
    ok_client, client_body = _parse_json(request.get("body") or "")

    calls: list[tuple[Mapping[str, Any], Marks]] = []
    for i, call in enumerate(upstream or []):
        call_marks = marks.get(i, Marks())
        call_marks.headers |= marks["upstream"].headers
        ok_call, call_body = _parse_json(call.get("body") or "")
        if ok_client and ok_call:
            # The client pane shows what the last call (the one rules read by default) lacks.
            compare(
                client_body,
                call_body,
                (),
                client_marks if i == len(upstream or []) - 1 else Marks(),
                call_marks,
            )
        calls.append((call, call_marks))

    client = (
        f'<p class="line">{esc(request.get("method", ""))} {esc(request.get("url", ""))}</p>'
        f"{headers_html(request.get('headers') or {}, Marks())}"
        f"{_diff_note(client_marks)}{body_html(request.get('body'), request.get('headers') or {}, client_marks)}"
    )

    banner = "".join(f'<p class="line hit">{esc(note)}</p>' for note in marks["upstream"].notes)
    if upstream is None:
        up_req = up_ans = '<p class="muted">Not observable: no replay upstream (live mode).</p>'
    elif not upstream:
        up_req = '<p class="muted">The gateway made no upstream request for this case.</p>'
        up_ans = '<p class="muted">Nothing was served.</p>'
    else:
        reqs, answers = [], []
        for i, (call, call_marks) in enumerate(calls):
            label = f'<span class="callno">call {i}</span> ' if len(calls) > 1 else ""
            reqs.append(
                f'<div class="call"><p class="line">{label}{esc(call.get("method", ""))} '
                f"{esc(call.get('path', ''))}</p>{headers_html(call.get('headers') or {}, call_marks)}"
                f"{_diff_note(call_marks)}{body_html(call.get('body'), call.get('headers') or {}, call_marks)}"
                f"</div>"
            )
            served = call.get("served")
            if not isinstance(served, Mapping):
                answers.append(
                    f'<div class="call"><p class="line">{label}(no record of what was served)</p></div>'
                )
                continue
            source = served.get("cassette") or "an injected fault"
            if served.get("interaction") is not None:
                source = f"{source} #{served['interaction']}"
            answers.append(
                f'<div class="call"><p class="line">{label}status {esc(served.get("status"))} '
                f'<span class="muted">from {esc(source)}</span></p>'
                f"{headers_html(served.get('headers') or {}, Marks())}"
                f"{body_html(served.get('body'), served.get('headers') or {}, Marks())}</div>"
            )
        up_req, up_ans = "".join(reqs), "".join(answers)

    status = response.get("status")
    head = f"status {esc(status)}" if status is not None else "no response"
    extras = [f"{float(response['elapsed']):.2f}s"] if response.get("elapsed") is not None else []
    if response.get("truncated"):
        extras.append("truncated")
    line_cls = " hit" if marks["response"].status else ""
    gateway = f'<p class="line{line_cls}">{head} <span class="muted">{esc(" · ".join(extras))}</span></p>'
    if response.get("transport_error"):
        gateway += f'<p class="line hit">{esc(response["transport_error"])}</p>'
    gateway += headers_html(response.get("headers") or {}, marks["response"]) + body_html(
        response.get("body"), response.get("headers") or {}, marks["response"]
    )

    return (
        '<div class="panes">'
        + _pane("1", "Client request", "harness → gateway", "p1", client)
        + _pane("2", "Request sent upstream", "gateway → upstream", "p2", banner + up_req)
        + _pane("3", "Upstream answer", "upstream → gateway (what the replay served)", "p3", up_ans)
        + _pane("4", "Gateway answer", "gateway → harness", "p4", gateway)
        + "</div>"
    )


# --- the page -----------------------------------------------------------------------------------------


def _result_key(result: Mapping[str, Any]) -> str:
    variant = variant_label(result.get("variant") or {})
    return f"{result['rule_id']}[{variant}]" if variant else str(result["rule_id"])


def _violations_html(result: Mapping[str, Any]) -> str:
    violations = result.get("violations") or []
    if not violations:
        return ""
    rows = "".join(
        f"<tr><td><code>{esc(v.get('check', ''))}</code></td><td><code>{esc(v.get('path', ''))}</code></td>"
        f"<td>{esc(v.get('message', ''))}</td><td><code>{esc(short_json(v.get('expected')))}</code></td>"
        f"<td><code>{esc(short_json(v.get('actual')))}</code></td></tr>"
        for v in violations
    )
    return (
        '<table class="violations"><thead><tr><th>check</th><th>path</th><th>what went wrong</th>'
        f"<th>expected</th><th>actual</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def failure_html(result: Mapping[str, Any], anchor: str) -> str:
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
    parts.append(panes_html(result))
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
            f'data-text="{esc(text)}"><td>{chip(r["outcome"])}</td><td><code>{esc(r["rule_id"])}</code>'
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


def _header(documents: Sequence[Mapping[str, Any]]) -> str:
    overall = overall_verdict(documents)
    targets = sorted({d["target"].get("description") or d["target"]["gateway_url"] for d in documents})
    urls = sorted({d["target"]["gateway_url"] for d in documents} - set(targets))
    profiles = "".join(
        f'<li><b>{esc(d["profile"]["name"])}</b> {chip(verdict(d))} <span class="muted">'
        f"{esc(d['profile'].get('title') or '')} ({esc(d['profile']['doc'])})</span></li>"
        for d in documents
    )
    versions = ", ".join(sorted({str(d["suite"]["version"]) for d in documents}))
    upstream = ", ".join(sorted({str(d["target"]["upstream"]) for d in documents}))
    duration = sum(float(d["timings"]["duration"]) for d in documents)
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
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    return (
        f'<header class="top v-{overall}"><div class="verdict"><div class="vword">{overall}</div>'
        f'<div class="vtext">{esc(VERDICT_TEXT[overall])}</div></div>'
        f'<div class="facts"><h1>Conformance certificate</h1><dl>{dl}</dl>'
        f'<ul class="profiles">{profiles}</ul></div></header>'
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


def certificate_html(documents: Sequence[Mapping[str, Any]]) -> str:
    """The whole certificate page for one run (one results document per profile)."""
    anchors: dict[tuple[int, int], str] = {}
    failures: list[str] = []
    for d, doc in enumerate(documents):
        for n, result in enumerate(doc["results"]):
            if result["outcome"] in PROBLEMS:
                anchors[(d, n)] = f"f{len(anchors) + 1}"
                failures.append(failure_html(result, anchors[(d, n)]))
    overall = overall_verdict(documents)
    names = ", ".join(d["profile"]["name"] for d in documents)
    areas = "".join(
        f'<div class="areabox"><h3>{esc(d["profile"]["name"])} {chip(verdict(d))}</h3>{_run_problems(d)}'
        f"{_area_table(d)}</div>"
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
        f'<section><h2>Totals per area</h2><div class="areagrid">{areas}</div></section>'
        f"<section><h2>Rules</h2>{_rules_table(documents, anchors)}</section>"
        f"{failure_section}</main>"
        f'<footer class="foot">Generated by gateway-conformance from {len(documents)} results document(s). '
        "Everything on this page is in this one file.</footer>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


LEGEND = (
    '<p class="legend">Marks: <span class="ln hit">named by a violation</span> '
    '<span class="ln added">in the upstream request, not at that path in the client request</span> '
    '<span class="ln changed">value differs from the client request (hover)</span> '
    '<span class="ln dropped">in the client request, not at that path upstream</span></p>'
)

SCRIPT = """
(function () {
  var q = document.getElementById('q'), o = document.getElementById('o');
  var shown = document.getElementById('shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#rules tbody tr'));
  function apply() {
    var text = q.value.toLowerCase().trim(), want = o.value, n = 0;
    rows.forEach(function (row) {
      var ok = (!text || row.getAttribute('data-text').indexOf(text) >= 0) &&
        (want === 'all' || (want === 'problems' ? row.getAttribute('data-problem') === '1'
                                                : row.getAttribute('data-outcome') === want));
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + ' of ' + rows.length + ' shown';
  }
  q.addEventListener('input', apply);
  o.addEventListener('change', apply);
  document.getElementById('filters').hidden = false;
  apply();
  document.body.setAttribute('data-filter-ready', String(rows.length));
})();
"""

CSS = """
:root{--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--na:#6e7781;--err:#8250df;--xfail:#0969da;
--bg:#f6f8fa;--line:#d0d7de;--ink:#1f2328;--muted:#656d76}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1400px;margin:0 auto;padding:0 24px 40px}
h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:0 0 8px}
code,pre,.cmd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
.muted{color:var(--muted)}
.top{display:flex;gap:28px;align-items:stretch;padding:22px 24px;background:#fff;border-bottom:1px solid var(--line);
border-top:6px solid var(--pass)}
.top.v-FAIL{border-top-color:var(--fail)}.top.v-INCOMPLETE{border-top-color:var(--warn)}
.verdict{min-width:220px;border-radius:10px;padding:16px 18px;color:#fff;background:var(--pass);
display:flex;flex-direction:column;justify-content:center}
.v-FAIL .verdict{background:var(--fail)}.v-INCOMPLETE .verdict{background:var(--warn)}
.vword{font-size:34px;font-weight:700;letter-spacing:.04em}.vtext{font-size:13px;opacity:.95}
.facts h1{margin:0 0 8px;font-size:22px}
.facts dl{display:grid;grid-template-columns:auto 1fr;gap:2px 14px;margin:0 0 8px}
.facts dt{color:var(--muted)}.facts dd{margin:0}
.profiles{margin:0;padding-left:18px}
.chip{display:inline-block;padding:1px 7px;border-radius:10px;font-size:11px;font-weight:600;color:#fff;
white-space:nowrap;vertical-align:middle;background:var(--na)}
.o-PASS{background:var(--pass)}.o-FAIL,.o-XPASS{background:var(--fail)}.o-WARN{background:var(--warn)}
.o-HARNESS_ERROR,.o-INCOMPLETE{background:var(--err)}.o-XFAIL{background:var(--xfail)}
.o-NOT_APPLICABLE,.o-SKIP{background:var(--na)}
.areagrid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
.areabox{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top}
thead th{font-size:12px;color:var(--muted);font-weight:600;background:#fff}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.zero{color:#c5cbd1}
tr.all th,tr.all td{font-weight:700;border-top:2px solid var(--line)}
.barcell{width:30%}.bar{display:flex;height:10px;border-radius:5px;overflow:hidden;background:#eaeef2;margin-top:4px}
.bar span{display:block;height:100%}
.filters{display:flex;gap:10px;align-items:center;margin:0 0 8px}
.filters input{flex:1;max-width:480px;padding:6px 9px;border:1px solid var(--line);border-radius:6px;font:inherit}
.filters select{padding:6px;border:1px solid var(--line);border-radius:6px;font:inherit;background:#fff}
.rules{border:1px solid var(--line)}.rules thead th{position:sticky;top:0}
.rules tr[data-problem="1"]{background:#fff8f8}
.variant,.why{font-size:12px;color:var(--muted)}.why{font-family:ui-monospace,monospace;word-break:break-word}
.count{display:inline-block;background:var(--fail);color:#fff;border-radius:10px;padding:0 8px;font-size:13px}
.failure{background:#fff;border:1px solid var(--line);border-left:5px solid var(--fail);border-radius:8px;
padding:14px 16px;margin:0 0 22px}
.failure h3 code{font-size:14px}.level{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 4px}
.ftitle{font-weight:400}
.quote{margin:8px 0;padding:8px 14px;border-left:4px solid #8c959f;background:#f6f8fa;font-size:15px}
.quote p{margin:0}.quote footer{font-size:12px;color:var(--muted);margin-top:4px}
.reason,.reading{margin:6px 0}
.violations{margin:10px 0;border:1px solid var(--line)}.violations td{font-size:13px;overflow-wrap:anywhere}
.violations td:first-child{white-space:nowrap}.violations td:nth-child(3){width:38%}
p.line.hit{background:#ffebe9;box-shadow:inset 3px 0 var(--fail);padding:1px 8px;color:var(--fail);font-weight:600}
.panes{display:grid;grid-template-columns:1fr 1fr;grid-template-areas:"p1 p2" "p4 p3";gap:10px;margin:12px 0}
.p1{grid-area:p1}.p2{grid-area:p2}.p3{grid-area:p3}.p4{grid-area:p4}
.pane{border:1px solid var(--line);border-radius:6px;padding:8px 10px;min-width:0;background:#fcfcfd}
.pane h4{margin:0 0 6px;font-size:13px}.pane .side{font-weight:400;color:var(--muted);font-size:12px}
.pane h4 .pn{display:inline-block;background:var(--ink);color:#fff;border-radius:50%;width:18px;height:18px;
text-align:center;font-size:11px;line-height:18px}
.line{margin:2px 0;font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.call+.call{border-top:1px dashed var(--line);margin-top:8px;padding-top:6px}
.callno{background:#eaeef2;border-radius:4px;padding:0 4px}
pre.body{margin:4px 0;padding:6px 0;background:#fff;border:1px solid #eaeef2;border-radius:4px;max-height:460px;
overflow:auto;white-space:pre-wrap;word-break:break-word}
.ln{display:block;padding:0 8px 0 22px;position:relative;min-height:1.2em}
.ln::before{position:absolute;left:6px;font-weight:700}
.ln.hit{background:#ffebe9;box-shadow:inset 3px 0 var(--fail)}.ln.hit::before{content:"!";color:var(--fail)}
.ln.added{background:#dafbe1}.ln.added::before{content:"+";color:var(--pass)}
.ln.dropped{background:#fff1e5;text-decoration:line-through;text-decoration-color:#bc4c00}
.ln.dropped::before{content:"\\2212";color:#bc4c00}
.ln.changed{background:#fff8c5}.ln.changed::before{content:"~";color:var(--warn)}
.legend .ln{display:inline-block;margin:0 6px 4px 0;border-radius:4px;font-size:12px}
.k{color:#0550ae}.v{color:#0a3069}.ev{display:inline-block;min-width:34px;color:var(--muted)}
.note{color:var(--fail);font-weight:600}
.diffnote{margin:4px 0;font-size:12px}.m-added{color:var(--pass)}.m-dropped{color:#bc4c00}.m-changed{color:var(--warn)}
details.headers summary{cursor:pointer;font-size:12px;color:var(--muted)}
.rerun-label{margin:10px 0 2px;font-size:12px;color:var(--muted)}
.cmd{background:#1f2328;color:#e6edf3;padding:8px 12px;border-radius:6px;white-space:pre-wrap;word-break:break-all;
user-select:all;margin:0}
.runproblems{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px;margin-bottom:8px}
.runproblems ul{margin:4px 0 0;padding-left:18px}
.foot{max-width:1400px;margin:0 auto;padding:10px 24px 30px;color:var(--muted);font-size:12px}
@media (max-width:900px){.panes{grid-template-columns:1fr;grid-template-areas:"p1" "p2" "p3" "p4"}
.top{flex-direction:column}}
@media print{.filters{display:none}pre.body{max-height:none}}
"""
