"""Who is judged and what one run of one rule found, and whether a rule can be judged against a target at all.

Plain values; the pytest items, the CLI and the mutants all read them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.checks import Violation
from harness.engine import steps as steps_mod
from harness.exchange import Exchange
from harness.featuresetup import KEY_FIELDS, FeatureSetup
from harness.outcomes import OutcomeName
from harness.spec.model import Rule

IMAGES_REF = "${images_url}"


KEEPALIVE_SILENCE_DEFAULT = 25.0


@dataclass(frozen=True)
class Target:
    """Who is judged, and how."""

    gateway_url: str  # the base URL, as the surface's SDKs take it (e.g. http://127.0.0.1:8080/openai/v1)
    gateway_key: str | None = None
    models: Mapping[str, str | None] = field(default_factory=dict)  # role → id (None: not available)
    features: frozenset[str] = frozenset()
    upstream_mode: Literal["replay", "live"] = "replay"
    replay_url: str | None = None
    rule_timeout: float = 30.0
    strict: bool = False
    repeat: int = 1  # live mode: each rule variant runs this many times (pass^k; FLAKY)
    # Seconds of upstream silence the keep-alive rules wait out (`$KEEPALIVE_SILENCE` in a rule's upstream
    # plan): 25 by default; a gateway that pings sooner may be declared so (--keepalive-silence).
    keepalive_silence: float = KEEPALIVE_SILENCE_DEFAULT
    # Seconds after which the gateway gives up on a non-streaming request (`--nonstream-timeout`), None when the
    # user did not declare it: `$NONSTREAM_TIMEOUT+N` in a rule's upstream plan is that limit plus N seconds.
    nonstream_timeout: float | None = None
    allow_large_requests: bool = (
        False  # live mode: send request bodies over 1 MB (harness/engine/costguard.py)
    )
    surface: str = "chat-completions"  # the inbound API the profile judges (harness/surfaces/)
    # How the claimed features are set up (--implementation FILE's `features:`): keys, marks, prices.
    setup: FeatureSetup = field(default_factory=FeatureSetup)


@dataclass(frozen=True)
class Outcome:
    rule_id: str
    variant: Mapping[str, Any]
    outcome: OutcomeName
    violations: tuple[Violation, ...] = ()
    reason: str = ""  # why NOT_APPLICABLE / HARNESS_ERROR
    exchange: Exchange | None = None
    duration: float = 0.0
    diagnostics: tuple[Mapping[str, Any], ...] = ()
    live: Mapping[str, Any] | None = None  # live mode: coverage, repeat and tokens (harness/engine/live.py)


def not_applicable_reason(rule: Rule, target: Target) -> str | None:
    """Why a rule cannot be judged against this target, or None when it can.

    Live mode decides per expectation (harness/engine/live.py), so `needs.replay` does not skip a rule there.
    """
    if _uses_images_url(rule.request) and not target.replay_url:
        return "needs the harness's loopback file server (only available with the replay upstream)"
    missing = sorted(f for f in rule.needs.features if f not in target.features)
    if missing:
        # "not claimed": an extended feature the gateway does not declare is no failure (profile openai).
        return (
            "not claimed: needs feature(s) not declared: " + ", ".join(missing) + " (declare with --feature)"
        )
    present = sorted(f for f in rule.needs.without if f in target.features)
    if present:
        return "applies only without feature(s): " + ", ".join(present)
    if uses_nonstream_timeout(rule.upstream) and target.nonstream_timeout is None:
        return (
            "needs the gateway's non-streaming timeout (declare it with --nonstream-timeout S; "
            "EZAT's doc gives 590 s)"
        )
    unset = missing_keys(rule, target.setup)
    if unset:
        return "needs the set-up's " + ", ".join(unset) + " (the features block of --implementation FILE)"
    unsupported = sorted(rule.needs.harness - steps_mod.IMPLEMENTED)
    if unsupported:
        return "this harness cannot run " + ", ".join(unsupported)
    unmapped = sorted(role for role in rule.needs.models if not target.models.get(role))
    if unmapped:
        return "model role(s) not mapped to a model: " + ", ".join(unmapped) + " (see --model-map)"
    return None


def missing_keys(rule: Rule, setup: FeatureSetup) -> list[str]:
    """The set-up keys the rule's request names (`$OVER_BUDGET_KEY`) that the set-up does not declare, each as
    `features.<feature>.<field>`."""
    text = json.dumps(rule.request)
    return [
        f"features.{feature}.{key_field}"
        for name, (feature, key_field) in KEY_FIELDS.items()
        if f"${name}" in text and name not in setup.keys
    ]


def _uses_images_url(value: Any) -> bool:
    return IMAGES_REF in json.dumps(value)


NONSTREAM_TIMEOUT_RE = re.compile(r"\$NONSTREAM_TIMEOUT(?:\+(\d+(?:\.\d+)?))?")


def uses_nonstream_timeout(upstream: Any) -> bool:
    return bool(upstream) and "$NONSTREAM_TIMEOUT" in json.dumps(upstream)
