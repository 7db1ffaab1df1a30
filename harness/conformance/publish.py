"""The conformance report's files and commands: certify's `--implementation*` and `--kill-matrix` options and the
`conformance-report.yaml` it writes; `gateway-conformance verify-report FILE`; `report --implementations DIR`.
The report itself is built and checked in harness.conformance.report (pure)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.conformance.report import CatalogDigest, Implementation, RuleInfo, build_report, inconsistencies
from harness.errors import BadReport, ConfigError
from harness.outcomes import EXIT_FAILURES, EXIT_OK

REPORT_NAME = "conformance-report.yaml"
FIELDS = ("organization", "project", "version", "url", "contact")
# The embedded run certifies the suite's own reference gateway, shipped in the same distribution.
REFERENCE = Implementation("gateway-conformance", "reference gateway (embedded)", __version__)


# --- certify ----------------------------------------------------------------------------------------------


def add_certify_options(parser: argparse.ArgumentParser) -> None:
    """certify's options for the conformance report (README "A conformance report")."""
    g = parser.add_argument_group("conformance report (conformance-report.yaml)")
    # --implementation FILE itself is a plugin option certify forwards (harness/orchestrate/options.py): its
    # `features:` block sets up the rules of the claimed features too.
    for name in FIELDS:
        flag = "org" if name == "organization" else name
        g.add_argument(f"--implementation-{flag}", dest=f"implementation_{name}", metavar="TEXT",
                       help=f"your gateway's {name}")  # fmt: skip
    g.add_argument(
        "--kill-matrix",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a kill-matrix.json of `gateway-conformance mutants` for a profile this run certifies: the "
        "report states its kill rate (repeatable, one per profile; none: the rate is null)",
    )


@dataclass(frozen=True)
class Publication:
    """What certify needs to write the report, checked before anything runs."""

    implementation: Implementation
    kill_matrices: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    specs_dir: str | None = None

    def write(self, report_dir: Path, documents: Sequence[Mapping[str, Any]]) -> Path | None:
        """Write `conformance-report.yaml`; None (and a line why) when a run has nothing to report."""
        from harness.paths import specs_root

        if not documents:
            print("no results: no conformance report written")
            return None
        root = specs_root(self.specs_dir)
        names = dict.fromkeys(d["profile"]["name"] for d in documents)  # openai runs once per gateway
        catalogs = {name: load_catalog(name, root) for name in names}
        try:
            report = build_report(documents, catalogs, self.implementation, self.kill_matrices)
        except ValueError as exc:
            raise ConfigError(f"cannot write {REPORT_NAME}: {exc}") from exc
        path = report_dir / REPORT_NAME
        write_report(path, report)
        run_names: list[Any] = [p["name"] for p in report["profiles"]]

        def label(p: dict[str, Any]) -> str:
            # A catalog run on several gateways (openai, anthropic on each reference profile) names which one.
            if run_names.count(p["name"]) == 1:
                return str(p["name"])
            gateway = str(p.get("gateway") or "")
            short = gateway.split("profile ")[-1] if "profile " in gateway else gateway
            return f"{p['name']}@{short}"

        cores = ", ".join(f"{label(p)} core {p['core']['result']}" for p in report["profiles"])
        print(f"conformance report: {path} ({cores})")
        return path


def prepare(args: argparse.Namespace) -> Publication:
    """The report's inputs from certify's arguments; ConfigError (exit 3) for a bad file or a misfit matrix."""
    from harness.paths import specs_root

    given = _implementation_fields(args)
    if not getattr(args, "gateway_url", None):
        if any(v is not None for v in given.values()):
            raise ConfigError(
                "--implementation* describe your gateway (with --gateway-url); the embedded run certifies the "
                "reference gateway"
            )
        implementation = REFERENCE
    else:
        implementation = Implementation(**given)
    root = specs_root(getattr(args, "specs_dir", None))
    matrices: dict[str, Mapping[str, Any]] = {}
    for path in getattr(args, "kill_matrix", None) or ():
        matrix = _read_json(path, "--kill-matrix")
        profile = matrix.get("profile") if isinstance(matrix, dict) else None
        if not isinstance(profile, str) or not isinstance(matrix.get("totals"), dict):
            raise ConfigError(
                f"--kill-matrix {path}: not a kill-matrix.json of `gateway-conformance mutants`"
            )
        if profile in matrices:
            raise ConfigError(f"--kill-matrix {path}: a second kill matrix for profile {profile}")
        if args.profile and profile not in args.profile:
            raise ConfigError(f"--kill-matrix {path}: of profile {profile}, which this run does not certify")
        from harness.conformance.report import kill_rate

        try:
            kill_rate(matrix, load_catalog(profile, root))
        except ValueError as exc:
            raise ConfigError(f"--kill-matrix {path}: {exc}") from exc
        matrices[profile] = matrix
    return Publication(implementation, matrices, getattr(args, "specs_dir", None))


SETUP_KEYS = {"summary": str, "config": list, "pins": list, "depends": dict}


def _setup(path: str, value: Any) -> dict[str, Any]:
    """The implementation file's `setup`: summary (one line), config and pins (lists of lines: the config
    file, flags, pinned dependencies), depends (rule id -> the setting its result depends on)."""
    if (
        not isinstance(value, dict)
        or set(value) - set(SETUP_KEYS)
        or not isinstance(value.get("summary"), str)
    ):
        raise ConfigError(
            f"--implementation {path}: setup is a mapping of summary (required), config, pins, depends"
        )
    for key, kind in SETUP_KEYS.items():
        if key in value and not isinstance(value[key], kind):
            raise ConfigError(f"--implementation {path}: setup.{key} must be a {kind.__name__}")
    out: dict[str, Any] = {"summary": value["summary"].strip()}
    out["config"] = [str(v) for v in value.get("config") or []]
    out["pins"] = [str(v) for v in value.get("pins") or []]
    out["depends"] = {str(k): str(v) for k, v in (value.get("depends") or {}).items()}
    return out


def _implementation_fields(args: argparse.Namespace) -> dict[str, Any]:
    fields: dict[str, Any] = dict.fromkeys(FIELDS)
    path = getattr(args, "implementation", None)
    if path is not None:
        import yaml

        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"--implementation {path}: cannot read: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"--implementation {path}: not YAML: {exc}") from exc
        if isinstance(data, dict) and "setup" in data:
            fields["setup"] = _setup(path, data.pop("setup"))
        if isinstance(data, dict):
            # The claimed features' set-up: read by the rules (harness/featuresetup.py), not the report.
            data.pop("features", None)
        if not isinstance(data, dict) or set(data) - set(FIELDS):
            extra = sorted(set(data) - set(FIELDS)) if isinstance(data, dict) else []
            raise ConfigError(
                f"--implementation {path}: expected a mapping of {', '.join(FIELDS)}, setup"
                + (f" (unknown: {', '.join(map(str, extra))})" if extra else "")
            )
        for key, value in data.items():
            if value is not None and (not isinstance(value, str | int | float) or not str(value).strip()):
                raise ConfigError(f"--implementation {path}: {key} must be a non-empty string")
            fields[key] = None if value is None else str(value).strip()
    for key in FIELDS:
        value = getattr(args, f"implementation_{key}", None)
        if value is not None:
            if not value.strip():
                raise ConfigError(f"--implementation-{'org' if key == 'organization' else key}: empty")
            fields[key] = value.strip()
    return fields


# --- files ------------------------------------------------------------------------------------------------


def load_catalog(profile: str, root: Path) -> CatalogDigest:
    """A profile's catalog as the report counts it, and its digest (harness.conformance.catalog_hash)."""
    from harness.conformance.catalog_hash import catalog_digest
    from harness.errors import SpecError
    from harness.paths import cassettes_dir
    from harness.spec import load_profile, load_rule_file
    from harness.spec.selection import rule_files

    spec = load_profile(profile, root)
    rules: dict[str, RuleInfo] = {}
    for path in rule_files(root / profile):
        try:
            loaded = load_rule_file(path)
        except SpecError:
            continue  # the run reported it as a collection error, which makes the results partial
        for rule in loaded.rules:
            rules[rule.id] = RuleInfo(rule.level, rule.needs.features, rule.needs.without)
    digest = catalog_digest(root, profile, cassettes_dir())
    return CatalogDigest(
        profile, spec.title, spec.doc, dict(spec.features), rules, digest.sha256, digest.files
    )


def write_report(path: Path, report: Mapping[str, Any]) -> None:
    import yaml

    head = (
        "# gateway-conformance conformance report (specs/schema/conformance-report.schema.json).\n"
        "# Check it against the suite it names: gateway-conformance verify-report <this file>\n"
    )
    text = yaml.safe_dump(dict(report), sort_keys=False, allow_unicode=True, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + text, encoding="utf-8")


def _read_json(path: Path, option: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{option} {path}: not JSON: {exc}") from exc


def read_report(path: Path) -> Any:
    """The parsed YAML of a report file (BadReport when it cannot be read or parsed)."""
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadReport(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BadReport(f"{path}: not a YAML file: {exc}") from exc


def schema_problems(report: Any) -> list[str]:
    import jsonschema

    from harness.paths import schema_path

    schema = json.loads(schema_path("conformance-report").read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(report), key=lambda e: e.json_path)
    best = jsonschema.exceptions.best_match(errors)
    return [] if best is None else [f"not a conformance report ({best.json_path}: {best.message})"]


def check_report(report: Any) -> list[str]:
    """Schema, then internal consistency: what `report --implementations` requires of every file."""
    return schema_problems(report) or inconsistencies(report)


def verify(report: Any, specs_dir: str | None = None) -> list[str]:
    """Every reason the installed suite does not stand behind this report (empty: it does)."""
    from harness.errors import SpecError
    from harness.paths import specs_root

    problems = check_report(report)
    if problems:
        return problems
    if report["suite"]["version"] != __version__:
        problems.append(
            f"suite version {report['suite']['version']} is not the installed {__version__}: verify it with "
            f"gateway-conformance {report['suite']['version']}"
        )
    root = specs_root(specs_dir)
    catalogs: dict[str, CatalogDigest | None] = {}
    for p in report["profiles"]:
        if p["name"] not in catalogs:  # a catalog run on several gateways is read once
            try:
                catalogs[p["name"]] = load_catalog(p["name"], root)
            except SpecError as exc:
                catalogs[p["name"]] = None
                problems.append(f"profile {p['name']}: not in the installed suite ({exc})")
        catalog = catalogs[p["name"]]
        if catalog is None:
            continue
        if catalog.sha256 != p["catalog"]["sha256"] or catalog.files != p["catalog"]["files"]:
            problems.append(
                f"profile {p['name']}: catalog hash {p['catalog']['sha256'][:16]}… ({p['catalog']['files']} "
                f"files) does not match the installed catalog and cassettes {catalog.sha256[:16]}… "
                f"({catalog.files} files)"
            )
    return problems


# --- commands ---------------------------------------------------------------------------------------------


def verify_results(
    report: Any, documents: Sequence[Mapping[str, Any]], specs_dir: str | None = None
) -> list[str]:
    """Every way the report is not what these results documents (its run's results.json) make of it: each
    document's profile entry, rebuilt here, must have the report's outcomes digest, core and feature results."""
    from harness.conformance.report import profile_entry
    from harness.paths import specs_root

    problems: list[str] = []
    entries = {(p["name"], p["gateway"]): p for p in report["profiles"]}
    for document in documents:
        name = document["profile"]["name"]
        gateway = str(document["target"].get("description") or document["target"]["gateway_url"])
        stated = entries.get((name, gateway))
        if stated is None:
            problems.append(f"results of {name} on {gateway}: the report has no such profile run")
            continue
        rebuilt = profile_entry(document, load_catalog(name, specs_root(specs_dir)))
        if stated.get("outcomes_sha256") != rebuilt["outcomes_sha256"]:
            problems.append(f"profile {name} on {gateway}: its outcomes digest is not that of these results")
        for part in ("core", "features"):
            if stated.get(part) != rebuilt.get(part):
                problems.append(f"profile {name} on {gateway}: its {part} is not what these results give")
    return problems


def verify_command(args: argparse.Namespace) -> int:
    """`gateway-conformance verify-report FILE [--results RESULTS.json ...]`: exit 0 when the installed suite
    stands behind it (and, given its results files, when it is what they give), 1 with one line per reason when
    not, 3 when a file cannot be read (harness/cli/report.py parses the arguments)."""
    report = read_report(args.report)
    problems = verify(report, args.specs_dir)
    documents = [_read_results(path) for path in args.results or ()]
    if documents and not problems:
        problems = verify_results(report, documents, args.specs_dir)
    for problem in problems:
        print(f"{args.report}: rejected: {problem}")
    if problems:
        return EXIT_FAILURES
    proved = "suite version, catalog and cassette digest, statistics that add up"
    if documents:
        proved += (
            f"; derived from the {len(documents)} results file(s) given (outcomes digest, core, features)"
        )
    print(f"{args.report}: verified against gateway-conformance {__version__} ({proved}). This does not prove a "
          "run produced it: re-run the command its results name (`rerun`) against the gateway to see that")  # fmt: skip
    return EXIT_OK


def _read_results(path: Path) -> dict[str, Any]:
    import json

    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--results {path}: cannot read it: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise ConfigError(f"--results {path}: not a results.json (no results list)")
    return document


def load_folder(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every `*.yaml` / `*.yml` under the folder, each a valid, consistent report (BadReport names the first
    that is not: a folder with a broken file never renders a table that silently lacks it)."""
    if not folder.is_dir():
        raise BadReport(f"--implementations {folder}: no such directory")
    found = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not found:
        raise BadReport(f"--implementations {folder}: no report (*.yaml) in it")
    reports = []
    for path in found:
        report = read_report(path)
        problems = check_report(report)
        if problems:
            raise BadReport(f"{path}: {problems[0]}")
        reports.append((path.relative_to(folder).as_posix(), report))
    return reports


def stored_results(folder: Path, reports: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The results.json stored beside each report (a peer run's evidence), by the report's relative path."""
    out = {}
    for source, _report in reports:
        beside = (folder / source).parent / "results.json"
        if beside.is_file():
            out[source] = json.loads(beside.read_text(encoding="utf-8"))
    return out


TABLE_BEGIN = "<!-- implementations table: generated by `report --implementations implementations`"
TABLE_END = "<!-- end of the generated table -->"


def readme_table(folder: Path) -> str:
    """The table as the README carries it: the rows of implementations.md's table, nothing typed by hand."""
    from harness.conformance.implementations import implementations_markdown

    text = implementations_markdown(load_folder(folder))
    return "\n".join(line for line in text.splitlines() if line.startswith("|"))


def splice_table(readme: Path, folder: Path) -> None:
    """Replace what lies between the README's table markers with the table of the stored reports."""
    text = readme.read_text(encoding="utf-8")
    start = text.find(TABLE_BEGIN)
    end = text.find(TABLE_END, start)
    if start < 0 or end < 0:
        raise ConfigError(
            f"--readme {readme}: no implementations-table markers ({TABLE_BEGIN} … {TABLE_END})"
        )
    head = text.index("\n", start) + 1
    readme.write_text(text[:head] + readme_table(folder) + "\n" + text[end:], encoding="utf-8")


def write_implementations(folder: Path, out: Path) -> list[Path]:
    from harness.conformance.implementations import (
        findings_markdown,
        implementations_html,
        implementations_markdown,
    )

    reports = load_folder(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "implementations.md", out / "implementations.html"]
    import os

    # the links to the stored exchanges, relative to where implementations.md is written
    rel = Path(os.path.relpath(folder.resolve(), out.resolve())).as_posix()
    findings = findings_markdown(reports, stored_results(folder, reports), "" if rel == "." else f"{rel}/")
    written[0].write_text(implementations_markdown(reports) + "\n" + findings, encoding="utf-8")
    written[1].write_text(implementations_html(reports), encoding="utf-8")
    return written
