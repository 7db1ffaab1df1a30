"""The spec model: frozen rules read from `specs/`. This package is the only reader of rule files.

model.py       frozen values: rules, profiles, needs (pure)
loader.py      read and validate rule files and profiles (every problem a SpecError with file and line)
selection.py   which files are rule files, which rules a run selects (--rule globs), its variants
collection.py  a catalog that does not load is bad configuration, found before anything runs
lint.py        `lint-specs`: a specs folder checked whole (schemas, ids, roles, ledger, quotes)
scaffold.py    `new-profile`: a first profile, rule and ledger from a gateway's doc
"""

from __future__ import annotations

from harness.spec.loader import load_profile, load_rule_file
from harness.spec.model import Needs, Profile, Rule, RuleFile, Source, placeholders_in

__all__ = [
    "Needs",
    "Profile",
    "Rule",
    "RuleFile",
    "Source",
    "load_profile",
    "load_rule_file",
    "placeholders_in",
]
