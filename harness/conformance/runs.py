"""A run as `diff` and `certify --baseline` read it: its results documents (one per catalog run, the clients'
too) and the catalog digest each profile ran on, from a results file, a report folder or a conformance report.

A results file names no catalog digest; the conformance report written beside it does (certify's report folder:
`conformance-report.yaml` above `<profile>/results.json`; a stored run: both in one folder), so it is read when it
is there and the digest is "not known" when it is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import BadReport, BadResults, ConfigError

REPORT_NAME = "conformance-report.yaml"
RESULTS_NAME = "results.json"
# Folders of a report that hold no results document of the run (a failing rule's stored exchanges).
_NOT_RESULTS = frozenset({"exchanges", "reproduce"})


@dataclass(frozen=True)
class Run:
    """One run: `documents` by label (`openai`, `openai@lyrouter`: a catalog on several gateways), each a
    results document; `catalogs` the catalog sha256 by profile name, where a conformance report says it."""

    source: str
    documents: Mapping[str, Mapping[str, Any]]
    catalogs: Mapping[str, str] = field(default_factory=dict)
    date: str | None = None

    @property
    def suites(self) -> list[str]:
        return sorted({str(d["suite"]["version"]) for d in self.documents.values()})


def document_label(document: Mapping[str, Any]) -> str:
    """The profile's name, and the gateway profile it ran on when a catalog runs on several (`openai@lyrouter`);
    a clients document is `clients:<profile>` (its ids are the clients', never a catalog's)."""
    from harness.report.text import profile_label

    label = profile_label(document)
    if document.get("clients") is not None:
        return f"clients:{label}"
    return label


def load_run(path: str | Path) -> Run:
    """The run at `path`: a results file, a conformance report, or a folder holding either (ConfigError,
    exit 3, naming what is wrong, when it is none of these)."""
    given = Path(path)
    if given.is_dir():
        report = given / REPORT_NAME
        files = _results_files(given)
        if not files and not report.is_file():
            raise ConfigError(
                f"{given}: no {RESULTS_NAME} and no {REPORT_NAME} in it (give a report folder, a results file "
                "or a conformance report)"
            )
        catalogs, date = _report_facts(report) if report.is_file() else ({}, None)
        for sub in sorted(
            {f.parent for f in files} - {given}
        ):  # a folder of stored runs, each with its report
            if (sub / REPORT_NAME).is_file():
                found, when = _report_facts(sub / REPORT_NAME)
                catalogs = {**found, **catalogs}
                date = date or when
        return Run(str(given), _documents(files), catalogs, date)
    if not given.is_file():
        raise ConfigError(f"{given}: no such file or folder")
    if given.suffix in (".yaml", ".yml"):
        catalogs, date = _report_facts(given)
        files = _results_files(given.parent)
        if not files:
            raise ConfigError(
                f"{given}: no {RESULTS_NAME} beside it: a conformance report alone has no per-rule outcomes "
                "(give the report folder, or its results files)"
            )
        return Run(str(given), _documents(files), catalogs, date)
    catalogs, date = {}, None
    for folder in (given.parent, given.parent.parent):
        if (folder / REPORT_NAME).is_file():
            catalogs, date = _report_facts(folder / REPORT_NAME)
            break
    return Run(str(given), _documents([given]), catalogs, date)


def _results_files(folder: Path) -> list[Path]:
    """The results documents of a report folder: its own, its profiles' (`<profile>/results.json`) and its
    clients' (`clients/<profile>/results.json`)."""
    found = [folder / RESULTS_NAME] if (folder / RESULTS_NAME).is_file() else []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in _NOT_RESULTS):
        found += [sub / RESULTS_NAME] if (sub / RESULTS_NAME).is_file() else []
        if sub.name == "clients":
            found += sorted(sub.glob(f"*/{RESULTS_NAME}"))
    return found


def _documents(files: list[Path]) -> dict[str, dict[str, Any]]:
    from harness.report import load_results

    out: dict[str, dict[str, Any]] = {}
    for path in files:
        try:
            document = load_results(path)
        except BadResults as exc:
            raise ConfigError(str(exc)) from exc
        label = document_label(document)
        if (
            label in out
        ):  # the same catalog run twice under one folder (stored runs: responses, responses-native)
            label = f"{label} ({path.parent.name})"
        if label in out:
            raise ConfigError(f"{path}: a second results document for {label} in one run")
        out[label] = document
    return out


def _report_facts(path: Path) -> tuple[dict[str, str], str | None]:
    """Each profile's catalog digest and the run's date, from its conformance report."""
    import yaml

    try:
        report = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BadReport(f"{path}: cannot read the conformance report: {exc}") from exc
    if not isinstance(report, dict) or not str(report.get("format", "")).startswith("gateway-conformance/"):
        raise BadReport(f"{path}: not a gateway-conformance conformance report")
    catalogs = {
        str(p["name"]): str(p["catalog"]["sha256"])
        for p in report.get("profiles") or []
        if isinstance(p, dict) and isinstance(p.get("catalog"), dict)
    }
    return catalogs, str(report["date"]) if report.get("date") else None
