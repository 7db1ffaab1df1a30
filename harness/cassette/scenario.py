"""A cassette's scenario: what it exists to show, the request that provokes it on a real provider, and the check
that a new recording still shows it (so `record` never turns a refusal cassette into a plain answer).

The `scenario` block of a cassette (specs/README.md, "Cassettes"):

    scenario:
      recordable: true                # false: `why` says what a provider cannot produce on demand
      request: {…}                    # the body record sends (`stream` set per interaction); `${nonce}` is a fresh
                                      # token per attempt, so a cache write is a write and not a read
      prime: true | {…}               # sent once first, not kept: the cached prefix a read needs
      expect:                         # the properties, in the family's own words
        stop_reason: max_tokens       # stop_reason | finish_reason | finishReason
        blocks: [text, tool_use(get_weather)]   # content kinds in order (record_diff's summary)
        tool_arguments: {get_weather: {required: [city]}}  # JSON Schema for each named call's arguments
        usage: {cache_read_input_tokens: {min: 1}}          # Anthropic-named usage (checks/answer.py)
        text: {schema: {…}, matches: 'regex', min_length: N}
        thinking: true                # thinking / reasoning text present
        stop_sequence: '5'            # Anthropic: the stop sequence that ended the turn
        model: {matches: '-\\d{8}$'}
        fields: [reasoning_content]   # OpenAI: message / delta fields present
        usage_fields: [prompt_cache_hit_tokens]   # usage fields present (a provider's own counters)
        text_deltas: {min: 20}        # streams: events carrying text
        status: 429                   # faults (not recordable): the status and error type they hold
        error_type: rate_limit_error

Pure: no I/O; the caller passes cassettes and interactions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import CassetteError

EXPECT_KEYS = frozenset(
    {
        "stop_reason",
        "blocks",
        "tool_arguments",
        "usage",
        "text",
        "thinking",
        "stop_sequence",
        "model",
        "fields",
        "usage_fields",
        "text_deltas",
        "logprobs",
        "status",
        "error_type",
    }
)
NONCE = "${nonce}"


@dataclass(frozen=True)
class Scenario:
    recordable: bool
    why: str | None = None  # not recordable: what cannot be provoked on demand
    request: Mapping[str, Any] | None = None
    prime: Mapping[str, Any] | None = None  # the priming body (the request itself for `prime: true`)
    expect: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"recordable": self.recordable}
        if self.why:
            out["why"] = self.why
        if self.request is not None:
            out["request"] = dict(self.request)
        if self.prime is not None:
            out["prime"] = True if self.prime == self.request else dict(self.prime)
        out["expect"] = dict(self.expect)
        return out


def parse_scenario(raw: Any, path: Path) -> Scenario | None:
    """The `scenario` block of a cassette file, validated; None when the cassette has none."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise CassetteError(path, "`scenario` must be a mapping")
    unknown = set(raw) - {"recordable", "why", "request", "prime", "expect"}
    if unknown:
        raise CassetteError(path, f"unknown scenario keys: {', '.join(sorted(unknown))}")
    recordable = raw.get("recordable")
    if not isinstance(recordable, bool):
        raise CassetteError(path, "scenario.recordable must be true or false")
    why = raw.get("why")
    if not recordable and not (isinstance(why, str) and why):
        raise CassetteError(path, "a scenario that is not recordable says `why`")
    request = raw.get("request")
    if recordable and not isinstance(request, Mapping):
        raise CassetteError(path, "a recordable scenario needs its `request` (the body record sends)")
    prime = raw.get("prime")
    if prime is True:
        prime = request
    elif prime not in (None, False) and not isinstance(prime, Mapping):
        raise CassetteError(path, "scenario.prime must be true or a request body")
    expect = raw.get("expect") or {}
    if not isinstance(expect, Mapping) or not expect:
        raise CassetteError(path, "scenario.expect must name at least one property")
    bad = set(expect) - EXPECT_KEYS
    if bad:
        raise CassetteError(path, f"unknown scenario.expect keys: {', '.join(sorted(bad))}")
    return Scenario(
        recordable=recordable,
        why=why if isinstance(why, str) else None,
        request=request if isinstance(request, Mapping) else None,
        prime=prime if isinstance(prime, Mapping) else None,
        expect=dict(expect),
    )


def with_nonce(value: Any, nonce: str) -> Any:
    """`value` with every `${nonce}` in its strings replaced."""
    if isinstance(value, str):
        return value.replace(NONCE, nonce)
    if isinstance(value, Mapping):
        return {k: with_nonce(v, nonce) for k, v in value.items()}
    if isinstance(value, list):
        return [with_nonce(v, nonce) for v in value]
    return value
