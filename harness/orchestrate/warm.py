"""The rule files of the bundled catalogs, parsed once: the child-run fork server (child.py) imports this module, with
pytest, the plugin and the engine, before it forks a child per catalog, so each child starts with them in memory
(about a second of CPU per child otherwise, a dozen children at once on two cores: issue 47, time to a verdict).
Parsed rule files are kept by path and content (`harness.spec.loader`), so a file changed since is read afresh."""

from __future__ import annotations

import contextlib

from harness.errors import SpecError
from harness.paths import specs_dir
from harness.spec.loader import load_rule_file
from harness.spec.selection import rule_paths


def warm() -> int:
    """Parse every bundled rule file (a file that does not load is left to the child, which reports it)."""
    parsed = 0
    for path in rule_paths([specs_dir()]):
        with contextlib.suppress(SpecError, OSError):
            load_rule_file(path)
            parsed += 1
    return parsed


warm()
