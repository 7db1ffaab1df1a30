"""What a gateway's set-up declares for the features it claims (specs/features/gateway-features.md): the
`features:` block of its implementation file (`--implementation FILE`, specs/schema/implementation.schema.json).

A rule reaches it two ways: a request names a key the set-up configured (`$RATE_LIMITED_KEY`, `$OVER_BUDGET_KEY`),
and the checks that read the set-up (`own_limit`, `forwards_headers`, `cost`) find the rest on the exchange. Never
guessed: a claimed feature without its set-up is a configuration error (exit 3), and evidence carries each key as a
placeholder (`<OVER_BUDGET_KEY>`), never its value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.errors import ConfigError

# The key placeholders a rule's request may name, and where the set-up declares each.
KEY_FIELDS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"RATE_LIMITED_KEY": ("rate-limits", "limited_key"), "OVER_BUDGET_KEY": ("budget", "over_budget_key")}
)
# What a claimed feature needs declared (the schema says the shape; this says which claims need which block).
NEEDS_SETUP: Mapping[str, str] = MappingProxyType(
    {
        "rate-limits": "the mark of its own 429 (own_mark), and the key it limits (limited_key) if it has a limit",
        "budget": "a key over its budget (over_budget_key)",
        "cost": "where it reports cost (header or field) and its price table (prices)",
    }
)


@dataclass(frozen=True)
class FeatureSetup:
    """The declared set-up: the keys by placeholder name, and every other setting by feature (no secret)."""

    keys: Mapping[str, str] = field(default_factory=dict)
    declared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str | None = None  # the file it was read from, for messages

    def missing_for(self, features: Iterable[str]) -> list[str]:
        """The claimed features whose set-up is not declared, each as a line saying what it needs."""
        return [
            f"--feature {name} needs features.{name} in the implementation file: {NEEDS_SETUP[name]}"
            for name in features
            if name in NEEDS_SETUP and name not in self.declared
        ]


def setup_from(data: Mapping[str, Any], env: Mapping[str, str], where: str) -> FeatureSetup:
    """The set-up of an implementation document already checked against its schema; `{env: NAME}` keys read
    from `env`. Pure."""
    features = data.get("features") or {}
    keys: dict[str, str] = {}
    declared: dict[str, Mapping[str, Any]] = {}
    for name, settings in features.items():
        kept = dict(settings)
        for placeholder, (feature, key_field) in KEY_FIELDS.items():
            if feature == name and key_field in kept:
                keys[placeholder] = _secret(kept.pop(key_field), f"{where}: features.{name}.{key_field}", env)
        declared[name] = MappingProxyType(kept)
    return FeatureSetup(MappingProxyType(keys), MappingProxyType(declared), where)


def _secret(value: Any, where: str, env: Mapping[str, str]) -> str:
    if isinstance(value, str):
        return value
    name = str(value["env"])
    found = env.get(name, "")
    if not found:
        raise ConfigError(f"{where}: the environment variable {name} is not set")
    return found


def load_feature_setup(path: str | Path | None) -> FeatureSetup:
    """The `features:` block of an implementation file; an empty set-up without one. ConfigError (exit 3) for a
    file that cannot be read or does not match specs/schema/implementation.schema.json."""
    if not path:
        return FeatureSetup()
    import yaml

    from harness.spec.loader import validate_document

    where = f"--implementation {path}"
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not YAML: {exc}") from exc
    if data is None:
        data = {}
    validate_document(where, data, "implementation")
    return setup_from(data, os.environ, where)


__all__ = ["KEY_FIELDS", "NEEDS_SETUP", "FeatureSetup", "load_feature_setup", "setup_from"]
