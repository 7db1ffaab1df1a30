"""The semantic diff of two recordings of a cassette (in each family's words, from harness/cassette/summary.py),
and which cassettes a live provider cannot reproduce on demand (faults). Pure."""

from __future__ import annotations

from typing import Any

from harness import sse
from harness.cassette.document import Cassette
from harness.cassette.summary import FAMILY_SUMMARIES, Summary, parse_json, summarize

# ---------------------------------------------------------------------------------------------
# Which scenarios can be recorded


def fault_reason(cassette: Cassette) -> str | None:
    """Why a live provider cannot reproduce this cassette on demand (a fault), or None when it can.

    Mid-stream errors in each family's framing: Anthropic `event: error`; OpenAI and Gemini a
    `data: {"error": …}` line (wire-reference.md §3).
    """
    for i, it in enumerate(cassette.interactions):
        status = it.response.status
        if not 200 <= status < 300:
            return f"interaction #{i} answers HTTP {status}"
        if not it.response.is_sse:
            continue
        for ev in sse.decode(it.response.body).events:
            if ev.event == "error":
                return f"interaction #{i} ends in a mid-stream `event: error`"
            data = parse_json(ev.data)
            if isinstance(data, dict) and "error" in data:
                return f'interaction #{i} ends in a mid-stream `data: {{"error": …}}` line'
    return None


# ---------------------------------------------------------------------------------------------
# The diff

_SCALARS = ("status", "body", "model", "stop_reason", "error_type", "blocks", "events", "event_count")
_SETS = ("message_fields", "content_fields", "usage_fields", "delta_usage_fields", "headers")
_COMMON_LABELS = {"error_type": "error type", "headers": "response headers"}


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return "null" if value is None else str(value)


def diff_summaries(old: Summary, new: Summary) -> list[str]:
    """One line per semantic difference, e.g. `stop_reason end_turn → max_tokens`, in the family's words."""
    family = FAMILY_SUMMARIES.get(
        new.kind or old.kind or "anthropic.messages", FAMILY_SUMMARIES["anthropic.messages"]
    )
    labels = {**_COMMON_LABELS, **family.labels}
    lines = []
    for attr in _SCALARS:
        a, b = getattr(old, attr), getattr(new, attr)
        if a != b:
            lines.append(f"{labels.get(attr, attr)} {_show(a)} → {_show(b)}")
    for attr in _SETS:
        a, b = getattr(old, attr), getattr(new, attr)
        parts = []
        if b - a:
            parts.append("appeared: " + ", ".join(sorted(b - a)))
        if a - b:
            parts.append("disappeared: " + ", ".join(sorted(a - b)))
        if parts:
            lines.append(f"{labels.get(attr, attr)} " + "; ".join(parts))
    return lines


def diff_cassettes(old: Cassette, new: Cassette) -> list[str]:
    """Semantic differences between the cassette being replaced and its new recording, per interaction."""
    lines = []
    if len(old.interactions) != len(new.interactions):
        lines.append(f"interactions {len(old.interactions)} → {len(new.interactions)}")
    for i, (a, b) in enumerate(zip(old.interactions, new.interactions, strict=False)):
        label = f"#{i} ({'stream' if a.request.stream else 'non-stream'})"
        lines.extend(f"{label}: {line}" for line in diff_summaries(summarize(a), summarize(b)))
    return lines
