"""Many rules failing the same way usually share one cause (wrong model ids, an undeclared feature, the
base path): find such groups in a results document and name the likely cause once. Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# At least this many failed results with the same answer make a pattern worth a line.
MIN_GROUP = 5


@dataclass(frozen=True)
class Pattern:
    profile: str
    status: int | None
    code: str | None
    rules: tuple[str, ...]
    cause: str
    message: str = ""  # the shared error message, normalised (what tells two causes of one status apart)

    def line(self) -> str:
        answer = f"HTTP {self.status}" if self.status is not None else "no answer"
        if self.code:
            answer += f" {self.code}"
        if self.message:
            answer += f": “{self.message}”"
        return f"{len(self.rules)} {self.profile} rules failed the same way ({answer}): {self.cause}"


_VOLATILE = re.compile(
    r"\[gc:[^\]]*\]|\b(?:req|msg|chatcmpl|toolu|call)_[A-Za-z0-9]+|\d+(?:\.\d+)?|\"[^\"]*\"|'[^']*'"
)


def normalised(message: str) -> str:
    """An error message with what varies from rule to rule (markers, ids, numbers, quoted values) taken out."""
    return " ".join(_VOLATILE.sub("…", message).split())[:90]


def _answer(result: Mapping[str, Any]) -> tuple[int | None, str | None, str | None, str]:
    """(status, error code, error type, message): the code and the type read apart — an unknown path's
    envelope has a type (`invalid_request_error`) and no code, and that absence is what the base-path hint reads."""
    response = (result.get("exchange") or {}).get("response") or {}
    body = response.get("body") or ""
    code = kind = None
    message = ""
    try:
        error = json.loads(body).get("error")
        if isinstance(error, dict):
            code, kind = error.get("code"), error.get("type")
            message = str(error.get("message") or "")
    except (ValueError, AttributeError):
        pass
    return (
        response.get("status"),
        str(code) if code is not None else None,
        str(kind) if kind is not None else None,
        message,
    )


def _cause(profile: str, status: int | None, code: str | None, message: str, expected_error: bool) -> str:
    text = f"{code or ''} {message}".lower()
    roles = f"gateway-conformance roles --profile {profile}"
    if status in (401, 403):
        return "the gateway refuses the key: check GC_GATEWAY_KEY / --gateway-key"
    if "model" in text or "route" in text or "deployment" in text:
        return (
            f"likely the model ids: map the profile's model roles to your gateway's ids with --model-map "
            f"(list the roles and draft a map: {roles} --write-model-map FILE --gateway-url URL)"
        )
    if status in (404, 405) and code is None:
        return "likely the base path: --gateway-url is the OpenAI base URL as an SDK takes it (often ending in /v1)"
    if status is not None and 200 <= status < 300 and expected_error:
        return (
            "the gateway answers where the doc says it refuses: if it has an optional feature that explains "
            f"this (e.g. a default model), declare it with --feature NAME (features: {roles})"
        )
    return f"one cause is likely; compare the first failure's exchange in the certificate ({roles})"


def failure_patterns(document: Mapping[str, Any], min_group: int = MIN_GROUP) -> list[Pattern]:
    """Groups of at least `min_group` FAIL/WARN results whose answers share status and error code."""
    # Grouped by the answer's status, error code and type, and its normalised message: one status can have
    # several causes (a 400 for max_tokens and a 400 for an unknown field are two lines, each with its cause).
    groups: dict[tuple[int | None, str | None, str | None, str], list[Mapping[str, Any]]] = {}
    messages: dict[tuple[int | None, str | None, str | None, str], str] = {}
    for r in document["results"]:
        if r["outcome"] not in ("FAIL", "WARN") or not r.get("exchange"):
            continue
        status, code, kind, message = _answer(r)
        key = (status, code, kind, normalised(message))
        groups.setdefault(key, []).append(r)
        messages.setdefault(key, message)
    patterns = []
    for (status, code, kind, norm), results in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        rules = tuple(dict.fromkeys(r["rule_id"] for r in results))
        if len(rules) < min_group:
            continue
        expected_error = all(
            any(v["check"] == "status" and _is_error_status(v.get("expected")) for v in r["violations"])
            for r in results
        )
        name = document["profile"]["name"]
        patterns.append(
            Pattern(
                name,
                status,
                code or kind,
                rules,
                _cause(name, status, code, messages[(status, code, kind, norm)], expected_error),
                norm,
            )
        )
    return patterns


def _is_error_status(expected: Any) -> bool:
    values = expected if isinstance(expected, list) else [expected]
    return bool(values) and all(isinstance(v, int) and v >= 400 for v in values)


def pattern_lines(documents: Sequence[Mapping[str, Any]]) -> list[str]:
    return [p.line() for doc in documents for p in failure_patterns(doc)]
