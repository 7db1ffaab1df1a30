"""Frozen values for rules and profiles. Pure: no I/O, no yaml."""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ROLE_RE = re.compile(r"\$([A-Z][A-Z0-9_]*)\b")
# Placeholders that are not model roles.
# (and the keys a gateway's set-up declares for its claimed features: harness/featuresetup.py).
RESERVED = frozenset({"MARKER", "GATEWAY_KEY", "RATE_LIMITED_KEY", "OVER_BUDGET_KEY"})

# Expectation keys that only make sense for a streamed answer.
STREAM_ONLY = frozenset({"stream_order", "chunks", "stream_matches_nonstream"})
# Expectation keys that read what the replay upstream saw or served.
UPSTREAM_SIDE_EXPECTATIONS = frozenset(
    {
        "upstream",
        "upstream_calls",
        "upstream_headers",
        "upstream_path",
        "upstream_schema",
        "upstream_raw",
        "upstream_compare",
        "usage",
        "forwards_headers",
        "cost",
    }
)
# Capabilities a rule may declare in `needs.harness` (specs/README.md, "Beyond one request"). A runner that does
# not implement one must report the rule NOT_APPLICABLE instead of running part of it.
HARNESS_CAPABILITIES = frozenset({"then", "upstream_path", "data_url", "websocket"})


@dataclass(frozen=True)
class Source:
    doc: str
    section: str
    quote: str


@dataclass(frozen=True)
class Needs:
    replay: bool
    models: frozenset[str]
    features: frozenset[str]
    without: frozenset[str]
    harness: frozenset[str] = frozenset()  # HARNESS_CAPABILITIES this rule uses


@dataclass(frozen=True)
class Rule:
    id: str
    level: str
    title: str
    source: Source
    request: Mapping[str, Any]
    expect: Mapping[str, Any]
    needs: Needs
    variants: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    upstream: Mapping[str, Any] | None = None
    when: tuple[Mapping[str, Any], ...] = ()
    then: tuple[Mapping[str, Any], ...] = ()  # further requests after the first: {request?, delay?, expect}
    reading: str | None = None
    tags: frozenset[str] = frozenset()
    aliases: tuple[str, ...] = ()
    live: Mapping[str, Any] | None = None  # how the rule runs against a live provider (specs/README.md)
    file: str = ""
    line: int = 0

    @property
    def profile(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def area(self) -> str:
        return self.id.split("/")[1]

    def variant_combos(self) -> list[dict[str, Any]]:
        """Every combination of the variant values, in declaration order; [{}] when there are none."""
        if not self.variants:
            return [{}]
        names = [name for name, _ in self.variants]
        return [
            dict(zip(names, values, strict=True))
            for values in itertools.product(*(v for _, v in self.variants))
        ]

    def expect_for(self, variant: Mapping[str, Any], families: Collection[str] = ()) -> dict[str, Any]:
        """`expect` with the matching `when` overrides applied, minus stream-only keys for non-stream variants.
        `families`: the provider families the gateway called (replay mode), for overrides keyed by `family`."""
        merged = dict(self.expect)
        for override in self.when:
            if not all(variant.get(k) == v for k, v in (override.get("variant") or {}).items()):
                continue
            if "family" in override and override["family"] not in families:
                continue
            merged.update(override["expect"])
        if not variant.get("stream", False) and not _body_streams(self.request):
            for key in STREAM_ONLY:
                merged.pop(key, None)
        return merged


def _body_streams(request: Mapping[str, Any]) -> bool:
    """The request asks for a stream: `stream: true` in its body, or a transport whose answer is always events
    (`transport: websocket`)."""
    body = request.get("body")
    return request.get("transport", "http") != "http" or (
        isinstance(body, Mapping) and body.get("stream") is True
    )


@dataclass(frozen=True)
class RoleSpec:
    default: str
    description: str
    upstream: str | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    doc: str
    title: str
    models: Mapping[str, RoleSpec]
    features: Mapping[str, str] = field(default_factory=dict)
    base_path: str | None = None
    surface: str = "chat-completions"  # the inbound API its rules speak (harness/surfaces/)


@dataclass(frozen=True)
class RuleFile:
    path: str
    rules: tuple[Rule, ...]


def placeholders_in(value: Any) -> Iterator[str]:
    """Model-role placeholders (`$MODEL`, `$MODEL_SAMPLING`, ...) anywhere in a JSON-like value."""
    if isinstance(value, str):
        for match in ROLE_RE.finditer(value):
            if match.group(1) not in RESERVED:
                yield match.group(1)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from placeholders_in(key)
            yield from placeholders_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from placeholders_in(item)
