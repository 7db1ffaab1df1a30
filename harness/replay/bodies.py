"""What a recorded or received upstream body is: its JSON value, and whether it asks for a stream. Pure and
import-light: the replay client (every catalog run) and the cassette code (the server, record) both read it."""

from __future__ import annotations

import json
from typing import Any


def parse_json_body(body: bytes) -> Any:
    """The JSON value of a body, or None when it is empty or not JSON."""
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def stream_flag(body_json: Any, path: str = "") -> bool:
    """Anthropic and OpenAI say `"stream": true` in the body; Gemini streams by path (`:streamGenerateContent`)."""
    if path.split("?", 1)[0].endswith(":streamGenerateContent"):
        return True
    return isinstance(body_json, dict) and body_json.get("stream") is True
