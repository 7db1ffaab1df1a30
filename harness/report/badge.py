"""badge.svg: `conformance | ezat 312/312`, colored by the overall verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.outcomes import NOT_JUDGED, overall_verdict

BADGE_COLORS = {
    "PASS": "#2da44e",
    "FAIL": "#cf222e",
    "INCOMPLETE": "#d4a72c",
    "UNJUDGED": "#6e7781",
    "INTERRUPTED": "#6e7781",
}


def _text_width(text: str) -> int:
    # Approximate Verdana 11px advance widths: enough for a badge, no font metrics needed.
    narrow, wide = set("ijlt.,:;|!/ 1()[]'"), set("mwMW@%")
    return round(sum(3.6 if c in narrow else 10.0 if c in wide else 7.0 for c in text))


def badge_svg(documents: Sequence[Mapping[str, Any]]) -> str:
    """`conformance | ezat 312/312`: passed out of the rules judged (not N/A), colored by the overall verdict."""
    overall = overall_verdict(documents)
    parts = []
    for doc in documents:
        totals = doc["totals"]
        judged = sum(n for outcome, n in totals.items() if outcome not in NOT_JUDGED)
        parts.append(f"{doc['profile']['name']} {totals.get('PASS', 0)}/{judged}")
    label, message = "conformance", " · ".join(parts) or "no results"
    if overall == "INCOMPLETE":
        message += " (incomplete)"
    elif overall == "UNJUDGED":
        message += " (nothing judged)"
    elif overall == "INTERRUPTED":
        message += " (interrupted)"
    lw, mw = _text_width(label) + 12, _text_width(message) + 12
    width, color = lw + mw, BADGE_COLORS[overall]
    esc = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
    label_x, message_x = lw / 2, lw + mw / 2
    label, message = ("".join(esc.get(c, c) for c in t) for t in (label, message))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{label}: {message}"><title>{label}: {message}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{color}"/><rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{label_x}" y="15" fill="#010101" fill-opacity=".3">{label}</text>'
        f'<text x="{label_x}" y="14">{label}</text>'
        f'<text x="{message_x}" y="15" fill="#010101" fill-opacity=".3">{message}</text>'
        f'<text x="{message_x}" y="14">{message}</text></g></svg>\n'
    )
