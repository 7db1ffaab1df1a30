"""What a recorded or received upstream body is: its JSON value, and whether it asks for a stream; and an ASGI
request's whole body. Import-light: the replay client (every catalog run), the cassette code (the server,
record), the mutating proxy and fuzz's tap read it."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
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


async def receive_body(receive: Callable[[], Awaitable[dict[str, Any]]]) -> bytes:
    """An ASGI request's whole body, up to its last piece or the client's disconnect. Collected in a bytearray:
    `bytes +=` would copy a 36 MB upload in 64 KB pieces some 500 times over."""
    received = bytearray()
    while True:
        message = await receive()
        received += message.get("body", b"")
        if not message.get("more_body") or message["type"] != "http.request":
            return bytes(received)
