"""`${...}` references in expected values, resolved against one exchange (specs/README.md, "References").

A string that is exactly one reference keeps the referenced value's JSON type; references inside a
longer string are interpolated as text. An unresolvable reference raises `RefError`, which checks
turn into a violation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from harness.checks import answer
from harness.errors import RefError
from harness.exchange import Exchange

REF_RE = re.compile(r"\$\{([^{}]*)\}")


def has_refs(value: Any) -> bool:
    if isinstance(value, str):
        return REF_RE.search(value) is not None
    if isinstance(value, Mapping):
        return any(has_refs(v) for v in value.values())
    if isinstance(value, list):
        return any(has_refs(v) for v in value)
    return False


class References:
    """Resolves references for one exchange; the upstream answer is summarised once, on first use."""

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange

    @cached_property
    def _answer(self) -> answer.UpstreamAnswer | None:
        served = answer.last_served(self.exchange)
        return answer.summarize(served) if served is not None else None

    def resolve(self, value: Any, *, escape: Callable[[str], str] | None = None) -> Any:
        """`value` with every reference replaced (recursively in lists and objects); never mutates it.

        `escape` is applied to text interpolated into a longer string (`re.escape` for `matches`).
        """
        if isinstance(value, str):
            return self._resolve_string(value, escape)
        if isinstance(value, Mapping):
            return {k: self.resolve(v, escape=escape) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v, escape=escape) for v in value]
        return value

    def _resolve_string(self, text: str, escape: Callable[[str], str] | None) -> Any:
        whole = REF_RE.fullmatch(text)
        if whole:
            return self.lookup(whole.group(1))

        def substitute(match: re.Match[str]) -> str:
            found = self.lookup(match.group(1))
            as_text = found if isinstance(found, str) else json.dumps(found, separators=(",", ":"))
            return escape(as_text) if escape else as_text

        return REF_RE.sub(substitute, text)

    def lookup(self, ref: str) -> Any:
        head, _, rest = ref.strip().partition(".")
        if head == "request" and rest.startswith("body."):
            return _dig(self.exchange.request.json, rest[5:], ref)
        if head == "request" and rest == "body":
            return self.exchange.request.json
        if head == "request" and rest.startswith("headers."):
            return _header(self.exchange.request.headers, rest[8:], ref)
        if head == "response" and rest.startswith("headers."):
            return _header(self.exchange.response.headers, rest[8:], ref)
        if head == "model":
            if rest in self.exchange.models:
                return self.exchange.models[rest]
            raise RefError(f"${{{ref}}}: model role {rest!r} is not mapped")
        if head == "answer":
            return self._answer_field(rest, ref)
        raise RefError(f"${{{ref}}}: unknown reference")

    def _answer_field(self, rest: str, ref: str) -> Any:
        if rest.startswith("body."):  # a field of the served JSON body (`${answer.body.usage}`)
            whole = self._answer_field("body", ref)
            return _dig(whole, rest[5:], ref)
        if rest == "body":
            # The whole served body (any status): its JSON value, or its text when it is not JSON.
            served = answer.last_served(self.exchange)
            if served is None:
                raise RefError(f"${{{ref}}}: no upstream answer was served for this case")
            try:
                return json.loads(served.body)
            except ValueError:
                return served.body.decode("utf-8", errors="replace")
        summary = self._answer
        if summary is None:
            raise RefError(
                f"${{{ref}}}: no upstream answer was served for this case (or it was not a message)"
            )
        name, _, sub = rest.partition(".")
        if name in ("text", "id", "model", "stop_reason", "thinking", "signature") and not sub:
            return getattr(summary, name)
        if name == "thinking_blocks" and not sub:
            return [dict(block) for block in summary.thinking_blocks]
        if name == "usage" and sub:
            if sub in summary.usage:
                return summary.usage[sub]
            return _dig(summary.raw_usage, sub, ref)
        if name == "tool_uses" and sub:
            index_text, _, attr = sub.partition(".")
            try:
                tool = summary.tool_uses[int(index_text)]
            except (ValueError, IndexError):
                raise RefError(
                    f"${{{ref}}}: the upstream answer has {len(summary.tool_uses)} tool uses"
                ) from None
            if attr == "fragments":  # a streamed OpenAI-family call's argument strings, in order
                return list(tool.fragments)
            if attr in ("id", "name", "arguments"):
                return getattr(tool, attr)
            if (
                attr == "text"
            ):  # a custom tool's freeform input (a Responses custom_tool_call, or `{"input": …}`)
                if tool.text is None:
                    raise RefError(
                        f'${{{ref}}}: the tool use has no freeform input (no {{"input": <string>}})'
                    )
                return tool.text
            if attr == "input":  # the arguments as the JSON value they spell (a Messages tool_use's `input`)
                try:
                    return json.loads(tool.arguments)
                except ValueError:
                    raise RefError(f"${{{ref}}}: the tool use's arguments are not JSON") from None
            raise RefError(f"${{{ref}}}: a tool use has id, name, arguments, input, text and fragments")
        raise RefError(f"${{{ref}}}: unknown answer field")


def _header(headers: Mapping[str, str], name: str, ref: str) -> str:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    raise RefError(f"${{{ref}}}: no header {name!r}")


def _dig(value: Any, dotted: str, ref: str) -> Any:
    """Follow a dotted path; integer segments index lists (`messages.0.content`)."""
    current = value
    for segment in dotted.split("."):
        if isinstance(current, Mapping) and segment in current:
            current = current[segment]
        elif (
            isinstance(current, list) and _is_index(segment) and -len(current) <= int(segment) < len(current)
        ):
            current = current[int(segment)]
        else:
            raise RefError(f"${{{ref}}}: nothing at {segment!r}")
    return current


def _is_index(segment: str) -> bool:
    return segment.lstrip("-").isdigit()
