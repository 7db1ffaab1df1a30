"""The page a vendor links to: every conformance report of a folder as one table (implementation, version,
date, profile, core result, features), in Markdown and self-contained HTML. Pure: reports in, text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.report.assets import CSS
from harness.report.atoms import esc
from harness.report.patterns import failure_patterns

# The certificate's chip colours, by what a result means for a client.
_CHIP = {"success": "o-PASS", "partial": "o-WARN", "failure": "o-FAIL", "not-claimed": "o-NOT_APPLICABLE"}

PAGE_CSS = """
.impl td{white-space:normal}.impl .feat{display:inline-block;margin:0 6px 3px 0;font-size:12px}
.impl .feat .chip{margin-left:3px}.impl .src{font-size:11px;color:var(--muted)}
"""


@dataclass(frozen=True)
class Row:
    source: str  # the report's file, relative to the folder
    implementation: Mapping[str, Any]
    date: str
    suite: str
    mode: str
    profile: str
    gateway: str  # shown when a report holds the profile more than once (a catalog run on several gateways)
    core: str
    must_passed: int
    must_total: int
    rules_not_run: int
    features: tuple[tuple[str, str], ...]  # claimed feature -> result
    unsupported: tuple[str, ...]
    kill_rate: float | None
    families: tuple[str, ...]


def rows(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Row]:
    """One row per (report, profile), sorted by implementation, version, profile, then newest first."""
    out = []
    for source, report in reports:
        names = [p["name"] for p in report["profiles"]]
        for p in report["profiles"]:
            must = p["core"]["statistics"]["must"]
            rate = p.get("kill_rate")
            out.append(
                Row(
                    source=source,
                    implementation=report["implementation"],
                    date=str(report["date"]),
                    suite=str(report["suite"]["version"]),
                    mode=str(report["mode"]),
                    profile=str(p["name"]),
                    gateway=str(p["gateway"]) if names.count(p["name"]) > 1 else "",
                    core=str(p["core"]["result"]),
                    must_passed=int(must["passed"]),
                    must_total=sum(int(v) for v in must.values()),
                    rules_not_run=int(p["core"]["statistics"]["rules_not_run"]),
                    features=tuple(
                        (f, str(e["result"])) for f, e in sorted(p["features"].items()) if e["claimed"]
                    ),
                    unsupported=tuple(p["unsupported_features"]),
                    kill_rate=None if rate is None else float(rate["rate"]),
                    families=tuple(sorted(p.get("upstream_families") or ())),
                )
            )

    def key(r: Row) -> tuple[str, ...]:
        i = r.implementation
        return (
            str(i.get("organization") or ""),
            str(i.get("project") or ""),
            str(i.get("version") or ""),
            r.profile,
            _negated(r.date),
        )

    return sorted(out, key=key)


def _negated(date: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in date)  # newest first within one implementation and profile


def implementation_name(impl: Mapping[str, Any]) -> str:
    parts = [str(impl[k]) for k in ("organization", "project") if impl.get(k)]
    return " / ".join(parts) if parts else "(unnamed implementation)"


def _core_text(r: Row) -> str:
    return f"{r.core} ({_core_detail(r)})"


def _core_detail(r: Row) -> str:
    not_run = f"; {r.rules_not_run} core rules not run" if r.rules_not_run else ""
    return f"{r.must_passed}/{r.must_total} MUST variants passed{not_run}"


def _link(url: object) -> str | None:
    """Only http(s) links: a report is a vendor's file, and a `javascript:` URL must not become a link."""
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None


def _profile(r: Row) -> str:
    return f"{r.profile} ({r.gateway})" if r.gateway else r.profile


def _rate(r: Row) -> str:
    return "—" if r.kill_rate is None else f"{r.kill_rate:.1%}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def exchange_name(result: Mapping[str, Any]) -> str:
    """The stored exchange of one FAIL/WARN result, beside its results.json: exchanges/<rule>[<variant>].json."""
    variant = ",".join(f"{k}={v}" for k, v in sorted((result.get("variant") or {}).items()))
    slug = str(result["rule_id"]).replace("/", "--") + (f"[{variant}]" if variant else "")
    return f"exchanges/{slug}.json"


def _first_message(result: Mapping[str, Any]) -> str:
    for v in result.get("violations") or ():
        return str(v.get("message") or "")
    return str(result.get("reason") or "")


def findings_markdown(
    reports: Sequence[tuple[str, Mapping[str, Any]]], results: Mapping[str, Mapping[str, Any]], base: str = ""
) -> str:
    """Per stored run: its set-up, its root causes, then every failing rule with its first violation and a link
    to the stored exchange (`base` prefixes the links: the folder as seen from where the text is read)."""
    out: list[str] = []
    for source, report in sorted(reports, key=lambda sr: sr[0]):
        impl = report["implementation"]
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        link = f"{base}{folder}/" if folder else base
        setup = impl.get("setup") or {}
        for p in report["profiles"]:
            out += ["", f"**{_md(implementation_name(impl))} {_md(str(impl.get('version') or ''))}, profile "
                    f"`{p['name']}`** ({report['mode']}, {str(report['date'])[:10]}; `{_md(source)}`)"]  # fmt: skip
            if setup:
                out.append(f"- set-up: {_md(setup.get('summary', ''))}")
                for line in [*setup.get("config", ()), *setup.get("pins", ())]:
                    out.append(f"  - {_md(line)}")
            depends = setup.get("depends") or {}
            doc = results.get(source)
            if doc is None:
                for cause in p.get("root_causes") or ():
                    out.append(f"- root cause: {_md(cause['cause'])} (e.g. `{cause['first_rule']}`)")
                continue
            failing: dict[str, Mapping[str, Any]] = {}
            for r in doc["results"]:
                if r["outcome"] in ("FAIL", "WARN") and r["profile"] == p["name"]:
                    failing.setdefault(str(r["rule_id"]), r)
            covered: set[str] = set()
            for pattern in failure_patterns(doc):
                first = failing.get(pattern.rules[0])
                shown = f" ([exchange]({link}{exchange_name(first)}))" if first else ""
                out.append(f"- root cause: {_md(pattern.line())}{shown}; its rules: "
                           + ", ".join(f"`{r}`" for r in pattern.rules))  # fmt: skip
                covered |= set(pattern.rules)
            for rule, r in sorted(failing.items()):
                if rule in covered:
                    continue
                note = f" — depends on the set-up: {_md(depends[rule])}" if rule in depends else ""
                out.append(
                    f"- {r['outcome']} `{rule}` ({r['level']}): {_md(_first_message(r))[:220]} "
                    f"([exchange]({link}{exchange_name(r)})){note}"
                )
    return "\n".join(out).lstrip("\n") + "\n"


def implementations_markdown(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    table = rows(reports)
    lines = [
        "# Conformance reports",
        "",
        f"{len(table)} profile result(s) from {len(reports)} report(s). Core: every rule that needs no feature; "
        "`success` = every core MUST rule variant passed and every core rule ran; features: the extended "
        "features the implementation declared, each with its result.",
        "",
        "| implementation | version | set-up | date | profile | mode | core | features | not claimed | kill rate | suite | report |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table:
        name = _md(implementation_name(r.implementation))
        url = _link(r.implementation.get("url"))
        shown = f"[{name}]({url.replace(')', '%29')})" if url else name
        features = ", ".join(f"{f}: {res}" for f, res in r.features) or "—"
        lines.append(
            f"| {shown} | {_md(str(r.implementation.get('version') or '—'))} "
            f"| {_md(str((r.implementation.get('setup') or {}).get('summary') or '—'))} | {r.date[:10]} | {_md(_profile(r))} "
            f"| {r.mode} | {_core_text(r)} | {_md(features)} | {_md(', '.join(r.unsupported) or '—')} "
            f"| {_rate(r)} | {_md(r.suite)} | `{_md(r.source)}` |"
        )
    return "\n".join(lines) + "\n"


def _chip(result: str) -> str:
    return f'<span class="chip {_CHIP.get(result, "o-NOT_APPLICABLE")}">{esc(result)}</span>'


def implementations_html(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    table = rows(reports)
    body = []
    for r in table:
        impl = r.implementation
        name = esc(implementation_name(impl))
        url = _link(impl.get("url"))
        linked = f'<a href="{esc(url)}">{name}</a>' if url else name
        contact = f'<div class="src">{esc(impl["contact"])}</div>' if impl.get("contact") else ""
        gateway = f'<div class="src">{esc(r.gateway)}</div>' if r.gateway else ""
        features = "".join(f'<span class="feat">{esc(f)}{_chip(res)}</span>' for f, res in r.features) or "—"
        body.append(
            f"<tr><td><b>{linked}</b>{contact}</td><td>{esc(impl.get('version') or '—')}</td>"
            f"<td>{esc(r.date[:10])}</td><td><code>{esc(r.profile)}</code>{gateway}</td><td>{esc(r.mode)}</td>"
            f'<td>{_chip(r.core)}<div class="src">{esc(_core_detail(r))}</div></td>'
            f"<td>{features}</td><td class='src'>{esc(', '.join(r.unsupported) or '—')}</td>"
            f'<td class="num">{esc(_rate(r))}</td><td>{esc(r.suite)}<div class="src">'
            f"{esc(', '.join(r.families) or '')}</div></td><td class='src'><code>{esc(r.source)}</code></td></tr>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>gateway-conformance: conformance reports</title><style>{CSS}{PAGE_CSS}</style></head><body>"
        '<header class="top"><div class="facts"><h1>Conformance reports</h1>'
        f"<p>{len(table)} profile result(s) from {len(reports)} report(s). Core: every rule that needs no "
        "feature; <b>success</b> = every core MUST rule variant passed and every core rule ran; "
        "<b>partial</b> = none failed but not all were judged; <b>failure</b> = a core MUST rule failed.</p>"
        '</div></header><main><table class="impl"><thead><tr><th>implementation</th><th>version</th>'
        "<th>date</th><th>profile</th><th>mode</th><th>core</th><th>features</th><th>not claimed</th>"
        "<th>kill rate</th><th>suite (upstream families)</th><th>report</th></tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></main></body></html>\n"
    )
