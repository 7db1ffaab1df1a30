"""The opaque strings this gateway hands clients to carry its own state (a reasoning item's `encrypted_content`, a
compaction item's): a prefix naming the kind and its version, then the JSON payload in URL-safe base64 without
padding. Not encrypted: the client only carries it back; a string of another maker's opens to None."""

from __future__ import annotations

import base64
import json
from typing import Any


def sealed(prefix: str, payload: Any) -> str:
    """`payload` as an opaque string starting with `prefix`."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return prefix + base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unsealed(prefix: str, content: Any) -> Any:
    """The payload of a string `sealed` made with `prefix`, or None (another prefix, not one of ours, not JSON)."""
    if not isinstance(content, str) or not content.startswith(prefix):
        return None
    encoded = content[len(prefix) :]
    try:
        return json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
