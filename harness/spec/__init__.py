"""The spec model: frozen rules read from `specs/`. This package is the only reader of rule files."""

from __future__ import annotations

from harness.spec.loader import SpecError, load_profile, load_rule_file, rule_files
from harness.spec.model import Needs, Profile, Rule, RuleFile, Source, placeholders_in

__all__ = [
    "Needs",
    "Profile",
    "Rule",
    "RuleFile",
    "Source",
    "SpecError",
    "load_profile",
    "load_rule_file",
    "placeholders_in",
    "rule_files",
]
