"""HTML atoms shared by the certificate and the matrix: escaping (every gateway string goes through `esc`),
short JSON, outcome chips, the run date."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any


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
