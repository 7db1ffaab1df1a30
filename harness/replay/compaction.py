"""OpenAI's `POST /v1/responses/compact` as the replay upstream plays it (OpenAI API reference: Responses > Compact a
response), for a gateway that passes compaction through to its Responses provider instead of compacting itself:
the case's Responses cassette answers the call as it would answer `POST /v1/responses` with the same body, and
that answer becomes the compacted window — the request's user messages as they were, then one `compaction` item
whose content is the answer's text.

OpenAI encrypts what the item carries and reads it back when the window returns as `input`; the replay keeps no
cipher, so the item carries the text readable (`gc-replay-compaction:<text>`), the way the rules can see it reach
the provider again (responses/compact/window-continues).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from harness.replay.plan import PlannedAnswer

SUFFIX = "/responses/compact"
CONTENT_PREFIX = "gc-replay-compaction:"


def asked(path: str) -> bool:
    """Whether `path` is the compaction endpoint (under any base path)."""
    return path.split("?", 1)[0].rstrip("/").endswith(SUFFIX)


def create_path(path: str) -> str:
    """The create endpoint the compaction's answer is scripted under: `…/responses`."""
    bare = path.split("?", 1)[0].rstrip("/")
    return bare[: -len("/compact")]


def _text(response: Mapping[str, Any]) -> str:
    parts = [
        part.get("text", "")
        for item in response.get("output") or []
        if isinstance(item, Mapping) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, Mapping) and part.get("type") == "output_text"
    ]
    return "".join(str(p) for p in parts)


def _user_messages(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    given = request.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
    kept = []
    for item in items:
        if (
            not isinstance(item, Mapping)
            or item.get("type", "message") != "message"
            or item.get("role") != "user"
        ):
            continue
        content = item.get("content")
        parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else list(content or [])
        kept.append(
            {"type": "message", "id": f"msg_{secrets.token_hex(12)}", "status": "completed", "role": "user",
             "content": parts}
        )  # fmt: skip
    return kept


def _usage(response: Mapping[str, Any]) -> dict[str, Any]:
    usage = dict(response.get("usage") or {})
    usage.setdefault("input_tokens", 0)
    usage.setdefault("output_tokens", 0)
    usage.setdefault("total_tokens", usage["input_tokens"] + usage["output_tokens"])
    usage.setdefault("input_tokens_details", {"cached_tokens": 0})
    usage.setdefault("output_tokens_details", {"reasoning_tokens": 0})
    return usage


def compacted(answer: PlannedAnswer, request: Any) -> PlannedAnswer:
    """The compaction answer made of a Responses answer (a JSON Response); any other answer (an error, a fault)
    is passed on as it is."""
    if answer.status != 200 or answer.sse or not isinstance(request, Mapping):
        return answer
    try:
        response = json.loads(answer.body)
    except ValueError:
        return answer
    if not isinstance(response, dict):
        return answer
    item = {"type": "compaction", "id": f"cmp_{secrets.token_hex(12)}", "encrypted_content": CONTENT_PREFIX + _text(response)}  # fmt: skip
    body = {
        "id": f"cmp_{secrets.token_hex(12)}",
        "object": "response.compaction",
        "created_at": response.get("created_at") or int(time.time()),
        "output": [*_user_messages(request), item],
        "usage": _usage(response),
    }
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = tuple((k, v) for k, v in answer.headers if k != "content-length")
    return replace(answer, body=encoded, headers=headers)
