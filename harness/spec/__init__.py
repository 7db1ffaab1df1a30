"""The spec model: frozen rules read from `specs/`. This package is the only reader of rule files
(harness/spec/selection.py says which files are rule files and which rules a run selects)."""

from __future__ import annotations

from harness.spec.loader import SpecError, load_profile, load_rule_file
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
]
