"""What the pytest route prints at its end, as certify prints it (issue 46): the table per area, the note on
failures that share one cause, the known failures; and where the rule files named in node ids are."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def file_label(path: Path, specs_root: Path | None) -> str:
    """A rule file as a user can open it: relative to the invocation folder when it is under it (a checkout:
    `specs/ezat/errors.yaml`), else under the specs root's parent (`specs/ezat/errors.yaml` too, the terminal
    summary saying where that folder is), else its absolute path."""
    resolved = path.resolve()
    for base in (Path.cwd().resolve(), specs_root.resolve().parent if specs_root else None):
        if base is None:
            continue
        try:
            return resolved.relative_to(base).as_posix()
        except ValueError:
            continue
    return resolved.as_posix()


def where_line(specs_root: Path | None) -> str | None:
    """`rule files: specs/ is /…/site-packages/harness/_data/specs` when node ids name files not under here."""
    if specs_root is None:
        return None
    root = specs_root.resolve()
    try:
        root.relative_to(Path.cwd().resolve())
        return None
    except ValueError:
        return f"rule files: {root.name}/… in the node ids is the folder {root}"


def terminal_summary(document: dict[str, Any], specs_root: Path | None, terminalreporter: Any) -> None:
    from harness.report.text import summarize

    terminalreporter.write_sep("=", f"gateway-conformance: profile {document['profile']['name']}")
    for line in summarize([document]).splitlines():
        terminalreporter.write_line(line)
    where = where_line(specs_root)
    if where:
        terminalreporter.write_line(where)
