"""The four panes of one exchange (request, answer, upstream request, served answer) as HTML, with diff
marks where a violation's JSON path points and where the gateway's request differs from the client's."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from harness.report.atoms import esc, short_json
from harness.sse import decode

Path = tuple[str | int, ...]

WILD = "*"

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


def _marked_calls(
    upstream: Sequence[Mapping[str, Any]],
    marks: dict[str | int, Marks],
    client_body: Any,
    client_marks: Marks,
) -> list[tuple[Mapping[str, Any], Marks]]:
    """Each upstream call with its marks; the client pane shows what the last call (the one rules read
    by default) lacks."""
    calls: list[tuple[Mapping[str, Any], Marks]] = []
    for i, call in enumerate(upstream):
        call_marks = marks.get(i, Marks())
        call_marks.headers |= marks["upstream"].headers
        ok_call, call_body = _parse_json(call.get("body") or "")
        if client_body is not _MISSING and ok_call:
            into = client_marks if i == len(upstream) - 1 else Marks()
            compare(client_body, call_body, (), into, call_marks)
        calls.append((call, call_marks))
    return calls


def _served_html(served: Any, label: str) -> str:
    if not isinstance(served, Mapping):
        return f'<div class="call"><p class="line">{label}(no record of what was served)</p></div>'
    if served.get("cassette"):
        source = str(served["cassette"])
    elif served.get("fault"):
        source = "a fault the rule scripts"
    elif served.get("provider_refusal"):
        source = "the replay's refusal, as the provider would refuse"
    else:  # no answer scripted for the family called, no match: the replay's own words, never a fault (issue 48)
        source = "the replay upstream's own diagnostic: no provider answer to give"
    if served.get("interaction") is not None:
        source = f"{source} #{served['interaction']}"
    return (
        f'<div class="call"><p class="line">{label}status {esc(served.get("status"))} '
        f'<span class="muted">from {esc(source)}</span></p>'
        f"{headers_html(served.get('headers') or {}, Marks())}"
        f"{body_html(served.get('body'), served.get('headers') or {}, Marks())}</div>"
    )


def _upstream_panes(upstream: Any, calls: list[tuple[Mapping[str, Any], Marks]]) -> tuple[str, str]:
    """Panes 2 and 3: the requests the gateway sent upstream, and what the replay served for each."""
    if upstream is None:
        muted = '<p class="muted">Not observable: no replay upstream (live mode).</p>'
        return muted, muted
    if not upstream:
        return (
            '<p class="muted">The gateway made no upstream request for this case.</p>',
            '<p class="muted">Nothing was served.</p>',
        )
    reqs, answers = [], []
    for i, (call, call_marks) in enumerate(calls):
        label = f'<span class="callno">call {i}</span> ' if len(calls) > 1 else ""
        reqs.append(
            f'<div class="call"><p class="line">{label}{esc(call.get("method", ""))} '
            f"{esc(call.get('path', ''))}</p>{headers_html(call.get('headers') or {}, call_marks)}"
            f"{_diff_note(call_marks)}{body_html(call.get('body'), call.get('headers') or {}, call_marks)}"
            f"</div>"
        )
        answers.append(_served_html(call.get("served"), label))
    return "".join(reqs), "".join(answers)


def _gateway_pane(response: Mapping[str, Any], marks: Marks) -> str:
    status = response.get("status")
    head = f"status {esc(status)}" if status is not None else "no response"
    extras = [f"{float(response['elapsed']):.2f}s"] if response.get("elapsed") is not None else []
    if response.get("truncated"):
        extras.append("truncated")
    line_cls = " hit" if marks.status else ""
    gateway = f'<p class="line{line_cls}">{head} <span class="muted">{esc(" · ".join(extras))}</span></p>'
    if response.get("transport_error"):
        gateway += f'<p class="line hit">{esc(response["transport_error"])}</p>'
    headers = response.get("headers") or {}
    return gateway + headers_html(headers, marks) + body_html(response.get("body"), headers, marks)


def panes_html(result: Mapping[str, Any]) -> str:
    """Client request → gateway → upstream request → upstream answer → gateway answer, marked."""
    exchange = result.get("exchange")
    if not isinstance(exchange, Mapping):
        return '<p class="muted">No exchange was recorded for this result.</p>'
    marks = violation_marks(result.get("violations") or [])
    request = exchange.get("request") or {}
    upstream = exchange.get("upstream")
    client_marks = Marks()
    ok_client, client_body = _parse_json(request.get("body") or "")
    calls = _marked_calls(upstream or [], marks, client_body if ok_client else _MISSING, client_marks)
    client = (
        f'<p class="line">{esc(request.get("method", ""))} {esc(request.get("url", ""))}</p>'
        f"{headers_html(request.get('headers') or {}, Marks())}"
        f"{_diff_note(client_marks)}{body_html(request.get('body'), request.get('headers') or {}, client_marks)}"
    )
    banner = "".join(f'<p class="line hit">{esc(note)}</p>' for note in marks["upstream"].notes)
    up_req, up_ans = _upstream_panes(upstream, calls)
    gateway = _gateway_pane(exchange.get("response") or {}, marks["response"])
    return (
        '<div class="panes">'
        + _pane("1", "Client request", "harness → gateway", "p1", client)
        + _pane("2", "Request sent upstream", "gateway → upstream", "p2", banner + up_req)
        + _pane("3", "Upstream answer", "upstream → gateway (what the replay served)", "p3", up_ans)
        + _pane("4", "Gateway answer", "gateway → harness", "p4", gateway)
        + "</div>"
    )


# --- the page -----------------------------------------------------------------------------------------
