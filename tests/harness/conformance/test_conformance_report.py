"""conformance-report.yaml (issue 21 item 4): built from a real certify run it validates against its schema,
verify-report accepts it and rejects a tampered one, and a folder of reports renders as one table."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness import __version__
from harness.cli import main
from harness.conformance.catalog_hash import catalog_digest
from harness.conformance.implementations import implementations_html, implementations_markdown
from harness.conformance.publish import REPORT_NAME, load_catalog
from harness.conformance.report import (
    CatalogDigest,
    Group,
    Implementation,
    RuleInfo,
    build_report,
    inconsistencies,
    result_of,
    statistics,
)
from harness.exchange import Exchange, ReceivedResponse, SentRequest, UpstreamCall
from harness.outcomes import EXIT_CONFIG, EXIT_FAILURES, EXIT_OK
from harness.paths import cassettes_dir, schema_path, specs_dir

SCHEMA = json.loads(schema_path("conformance-report").read_text(encoding="utf-8"))


def _valid(report: Mapping[str, Any]) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


# --- synthetic runs: the result definitions, one case each ----------------------------------------------

RULES = {
    "p/a/must": RuleInfo("MUST"),
    "p/a/should": RuleInfo("SHOULD"),
    "p/a/without-cache": RuleInfo("MUST", without=frozenset({"cache"})),
    "p/tools/call": RuleInfo("MUST", features=frozenset({"tools"})),
    "p/tools/slow-call": RuleInfo("MUST", features=frozenset({"tools", "slow"})),
    "p/vision/image": RuleInfo("MUST", features=frozenset({"vision"})),
}
CATALOG = CatalogDigest(
    profile="p",
    title="P",
    doc="p-doc",
    features={"tools": "tool calls", "vision": "images", "cache": "a cache", "slow": "long waits"},
    rules=RULES,
    sha256="0" * 64,
    files=3,
)


def _result(rule_id: str, outcome: str, families: list[str] | None = None) -> dict[str, Any]:
    return {
        "rule_id": rule_id,
        "variant": {},
        "level": RULES[rule_id].level if rule_id in RULES else "MUST",
        "area": rule_id.split("/")[1],
        "outcome": outcome,
        "upstream_families": families,
    }


def _document(
    results: list[dict[str, Any]], features: tuple[str, ...] = (), upstream: str = "replay", errors: int = 0
) -> dict[str, Any]:
    return {
        "suite": {"name": "gateway-conformance", "version": __version__},
        "profile": {"name": "p", "doc": "p-doc"},
        "target": {"gateway_url": "http://127.0.0.1:1/v1", "upstream": upstream, "features": list(features)},
        "timings": {"started": 1_790_000_000.0, "finished": 1_790_000_010.0, "duration": 10.0},
        "results": results,
        "collection_errors": errors,
    }


ALL_CORE_PASS = [
    _result("p/a/must", "PASS", ["anthropic.messages"]),
    _result("p/a/should", "WARN", ["anthropic.messages", "gemini.generate"]),
    _result("p/a/without-cache", "PASS", []),
]


def _core(results: list[dict[str, Any]], **kw: Any) -> str:
    report = build_report([_document(results, **kw)], {"p": CATALOG}, Implementation())
    _valid(report)
    assert inconsistencies(report) == []
    return str(report["profiles"][0]["core"]["result"])


@pytest.mark.parametrize(
    ("results", "kw", "expected"),
    [
        (ALL_CORE_PASS, {}, "success"),
        ([*ALL_CORE_PASS[:2], _result("p/a/without-cache", "FAIL")], {}, "failure"),
        ([*ALL_CORE_PASS[:2], _result("p/a/without-cache", "XFAIL")], {}, "failure"),
        ([*ALL_CORE_PASS[:2], _result("p/a/without-cache", "NOT_APPLICABLE")], {}, "partial"),
        ([*ALL_CORE_PASS[:2], _result("p/a/without-cache", "HARNESS_ERROR")], {}, "partial"),
        (ALL_CORE_PASS[:2], {}, "partial"),
        (ALL_CORE_PASS[:2], {"features": ("cache",)}, "success"),
        (ALL_CORE_PASS, {"errors": 1}, "partial"),
        ([*ALL_CORE_PASS[:2], _result("p/a/without-cache", "XPASS")], {}, "success"),
    ],
    ids=[
        "every-core-must-passed",
        "a-must-failed",
        "a-declared-known-failure-is-still-a-failure",
        "a-must-not-judged",
        "a-harness-error",
        "a-core-rule-not-run",
        "a-rule-excluded-by-a-declared-feature-is-not-missing",
        "a-rule-file-did-not-load",
        "xpass-is-a-pass-of-the-rule",
    ],
)
def test_core_result(results: list[dict[str, Any]], kw: dict[str, Any], expected: str) -> None:
    assert _core(results, **kw) == expected


def test_a_failed_should_rule_leaves_the_core_a_success_and_is_counted() -> None:
    stats = statistics(Group(frozenset({"p/a/should"}), (_result("p/a/should", "WARN"),)))
    assert stats["should"]["warned"] == 1 and stats["outcomes"]["WARN"] == 1
    assert result_of(stats) == "success"


def test_extended_features_claimed_unclaimed_and_rules_needing_another_undeclared_feature() -> None:
    results = [
        *ALL_CORE_PASS,
        _result("p/tools/call", "PASS"),
        _result("p/tools/slow-call", "NOT_APPLICABLE"),
    ]
    report = build_report([_document(results, features=("tools",))], {"p": CATALOG}, Implementation())
    _valid(report)
    profile = report["profiles"][0]
    tools = profile["features"]["tools"]
    # p/tools/slow-call also needs `slow`, which is not declared: it is slow's, so tools is a success.
    assert tools["claimed"] and tools["result"] == "success" and tools["statistics"]["rules"] == 1
    assert profile["features"]["vision"] == {
        "claimed": False,
        "result": "not-claimed",
        "meaning": "images",
        "rules": 1,
    }
    assert profile["declared_features"] == ["tools"]
    assert profile["unsupported_features"] == ["cache", "slow", "vision"]
    # The N/A slow-call variant is not a core variant either: core counts only rules that need no feature.
    assert profile["core"]["statistics"]["variants"] == 3
    assert report["upstream_families"] == ["anthropic.messages", "gemini.generate"]
    assert profile["upstream_families"] == {"anthropic.messages": 2, "gemini.generate": 1}


def test_a_declared_feature_whose_rule_failed_is_a_failure_and_the_core_is_not() -> None:
    results = [*ALL_CORE_PASS, _result("p/vision/image", "FAIL")]
    report = build_report([_document(results, features=("vision",))], {"p": CATALOG}, Implementation())
    assert report["profiles"][0]["core"]["result"] == "success"
    assert report["profiles"][0]["features"]["vision"]["result"] == "failure"


@pytest.mark.parametrize("family", ["openai.responses", "anthropic.count_tokens", "openai.chat"])
def test_every_provider_endpoint_the_replay_serves_is_a_family_a_report_may_name(family: str) -> None:
    # A gateway passing /v1/responses on to OpenAI's Responses API (LiteLLM's native path) wrote a report its own
    # schema refused: every endpoint kind the replay serves must be one a report can name.
    from typing import get_args

    from harness.families import EndpointKind

    assert set(get_args(EndpointKind)) <= set(SCHEMA["$defs"]["family"]["enum"])
    results = [{**r, "upstream_families": [family]} for r in ALL_CORE_PASS]
    report = build_report([_document(results)], {"p": CATALOG}, Implementation())
    _valid(report)
    assert report["upstream_families"] == [family]


def test_live_mode_says_why_no_upstream_family_is_known() -> None:
    live = [{**r, "upstream_families": None} for r in ALL_CORE_PASS]
    report = build_report([_document(live, upstream="live")], {"p": CATALOG}, Implementation())
    _valid(report)
    assert report["upstream_families"] is None and "live mode" in report["upstream_families_reason"]


def test_a_profile_without_feature_rules_is_all_core() -> None:
    core_only = CatalogDigest(
        "p", "P", "p-doc", {}, {k: v for k, v in RULES.items() if not v.features}, "0" * 64, 1
    )
    report = build_report([_document(ALL_CORE_PASS)], {"p": core_only}, Implementation())
    _valid(report)
    assert report["profiles"][0]["features"] == {} and report["profiles"][0]["core"]["result"] == "success"


def test_a_result_naming_no_catalog_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="not a rule of its catalog"):
        build_report([_document([_result("p/gone/rule", "PASS")])], {"p": CATALOG}, Implementation())


def _matrix(
    profile: str = "p", rules: tuple[str, ...] = ("p/a/must",), run: int = 8, killed: int = 6
) -> dict[str, Any]:
    totals = {"mutants": 10, "run": run, "killed": killed, "rules_killing_none": 1}
    return {"profile": profile, "complete": False, "totals": totals, "rules": list(rules)}


def test_kill_rate_from_a_matrix_null_with_a_reason_without_one_and_never_from_another_catalog() -> None:
    doc = _document(ALL_CORE_PASS)
    without = build_report([doc], {"p": CATALOG}, Implementation())["profiles"][0]
    assert without["kill_rate"] is None and "--kill-matrix" in without["kill_rate_reason"]
    with_matrix = build_report([doc], {"p": CATALOG}, Implementation(), {"p": _matrix()})
    _valid(with_matrix)
    assert with_matrix["profiles"][0]["kill_rate"] == {
        "rate": 0.75, "killed": 6, "run": 8, "mutants": 10, "complete": False, "rules_killing_none": 1,
    }  # fmt: skip
    with pytest.raises(ValueError, match="another catalog"):
        build_report([doc], {"p": CATALOG}, Implementation(), {"p": _matrix(rules=("p/a/renamed",))})
    with pytest.raises(ValueError, match="not in this run"):
        build_report([doc], {"p": CATALOG}, Implementation(), {"q": _matrix(profile="q")})


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("core", "statistics", "outcomes", "PASS"), 5, "outcomes sum to"),
        (("core", "statistics", "must", "passed"), 0, "per-level counts sum"),
        (("core", "result"), "failure", "its statistics give success"),
        (("core", "statistics", "rules_run"), 1, "rules_run"),
        (("unsupported_features",), ["vision"], "unsupported_features"),
    ],
    ids=["outcomes", "levels", "result", "rules", "features"],
)
def test_inconsistencies_are_found(path: tuple[str, ...], value: Any, message: str) -> None:
    report = build_report([_document(ALL_CORE_PASS)], {"p": CATALOG}, Implementation())
    target = report["profiles"][0]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert any(message in p for p in inconsistencies(report)), inconsistencies(report)


# --- the catalog digest ---------------------------------------------------------------------------------


def test_the_digest_is_sha256sum_of_the_sorted_files_and_changes_with_one_byte(tmp_path: Path) -> None:
    specs, cassettes = tmp_path / "specs", tmp_path / "cassettes"
    (specs / "p" / "sub").mkdir(parents=True)
    (cassettes / "__pycache__").mkdir(parents=True)
    (specs / "p" / "rules.yaml").write_bytes(b"rules\n")
    (specs / "p" / "sub" / "more.yaml").write_bytes(b"more\n")
    (cassettes / "a.yaml").write_bytes(b"answer\n")
    (cassettes / "__pycache__" / "x.pyc").write_bytes(b"cache")
    first = catalog_digest(specs, "p", cassettes)
    lines = sorted(
        [
            ("cassettes/a.yaml", b"answer\n"),
            ("specs/p/rules.yaml", b"rules\n"),
            ("specs/p/sub/more.yaml", b"more\n"),
        ]
    )
    manifest = "".join(f"{hashlib.sha256(data).hexdigest()}  {label}\n" for label, data in lines)
    assert first.manifest == manifest and first.files == 3
    assert first.sha256 == hashlib.sha256(manifest.encode()).hexdigest()
    (cassettes / "a.yaml").write_bytes(b"answer!\n")
    assert catalog_digest(specs, "p", cassettes).sha256 != first.sha256


def test_the_installed_catalog_digest_covers_the_profile_folder_and_every_cassette() -> None:
    digest = catalog_digest(specs_dir(), "ezat", cassettes_dir())
    labels = [line.split("  ", 1)[1] for line in digest.manifest.splitlines()]
    assert "specs/ezat/profile.yaml" in labels and "cassettes/anthropic/error-429.yaml" in labels
    assert not any(label.startswith(("specs/lyrouter/", "specs/schema/")) for label in labels)
    assert labels == sorted(labels, key=str.encode) and digest == catalog_digest(
        specs_dir(), "ezat", cassettes_dir()
    )


# --- upstream families in the results -------------------------------------------------------------------


def test_results_record_the_families_the_gateway_called_steps_and_companion_included() -> None:
    from harness.evidence import upstream_families

    def call(path: str) -> UpstreamCall:
        return UpstreamCall("POST", path, {}, b"{}")

    def exchange(*paths: str, upstream: bool = True, **kw: Any) -> Exchange:
        calls = tuple(call(p) for p in paths) if upstream else None
        req, resp = (
            SentRequest("POST", "http://g/v1/chat/completions", {}, b"{}"),
            ReceivedResponse(200, {}, b""),
        )
        return Exchange("r", {}, req, resp, upstream=calls, **kw)

    gemini = exchange("/v1beta/models/m:streamGenerateContent")
    both = exchange("/v1/messages", steps=(gemini,), companion=exchange("/v1/chat/completions"))
    assert upstream_families(both) == ["anthropic.messages", "gemini.generate", "openai.chat"]
    assert upstream_families(exchange()) == []
    assert upstream_families(exchange(upstream=False)) is None and upstream_families(None) is None


# --- a real certify run ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded reference gateway certified on a slice of ezat; its report folder."""
    out = tmp_path_factory.mktemp("certified")
    code = main(["certify", "--profile", "ezat", "--rule", "ezat/finish/*", "--report-dir", str(out)])
    assert code == EXIT_OK
    return out


@pytest.mark.e2e
def test_certify_writes_a_report_that_validates_and_verifies(
    certified: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = yaml.safe_load((certified / REPORT_NAME).read_text(encoding="utf-8"))
    _valid(report)
    assert report["implementation"]["project"] == "reference gateway (embedded)"
    assert report["suite"]["version"] == __version__ and report["mode"] == "replay"
    (profile,) = report["profiles"]
    assert profile["catalog"]["sha256"] == load_catalog("ezat", specs_dir()).sha256
    # A slice of the catalog proves no profile: the core is partial, with the rules that did not run counted.
    core = profile["core"]["statistics"]
    assert profile["core"]["result"] == "partial" and core["rules_not_run"] > 0
    assert core["must"]["passed"] >= 8 and core["must"]["failed"] == 0
    assert profile["declared_features"] == ["loopback-downloads"]
    assert "quota-exhausted-key" in profile["unsupported_features"]
    assert report["upstream_families"] == ["anthropic.messages"]
    assert profile["kill_rate"] is None
    assert main(["verify-report", str(certified / REPORT_NAME)]) == EXIT_OK
    assert "verified against gateway-conformance" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda r: r["profiles"][0]["catalog"].update(sha256="f" * 64),
            "does not match the installed catalog",
        ),
        (lambda r: r["suite"].update(version="0.0.1"), "is not the installed"),
        (lambda r: r["profiles"][0]["core"].update(result="success"), "its statistics give partial"),
        (lambda r: r.pop("mode"), "not a conformance report"),
        (lambda r: r["profiles"][0].update(name="no-such-profile"), "not in the installed suite"),
    ],
    ids=["catalog-hash", "suite-version", "result", "schema", "unknown-profile"],
)
@pytest.mark.e2e
def test_verify_report_rejects_a_tampered_report(
    certified: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, message: str
) -> None:
    report = yaml.safe_load((certified / REPORT_NAME).read_text(encoding="utf-8"))
    edit(report)
    path = tmp_path / "tampered.yaml"
    path.write_text(yaml.safe_dump(report), encoding="utf-8")
    assert main(["verify-report", str(path)]) == EXIT_FAILURES
    out = capsys.readouterr().out
    assert f"{path}: rejected: " in out and message in out


def test_verify_report_on_an_unreadable_file_exits_3(tmp_path: Path) -> None:
    assert main(["verify-report", str(tmp_path / "none.yaml")]) == EXIT_CONFIG
    (tmp_path / "bad.yaml").write_text("a: [", encoding="utf-8")
    assert main(["verify-report", str(tmp_path / "bad.yaml")]) == EXIT_CONFIG


def test_a_folder_of_reports_renders_as_one_table(certified: Path, tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    (folder / "reference").mkdir(parents=True)
    (folder / "reference" / REPORT_NAME).write_bytes((certified / REPORT_NAME).read_bytes())
    vendor = Implementation("Acme <b>", "acme-gw", "2.4.1", "javascript:alert(1)", "ops@acme.example")
    results = [*ALL_CORE_PASS, _result("p/vision/image", "FAIL")]
    acme = build_report([_document(results, features=("vision",))], {"p": CATALOG}, vendor)
    (folder / "acme.yaml").write_text(yaml.safe_dump(acme), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["report", "--implementations", str(folder), "--out", str(out)]) == EXIT_OK
    md = (out / "implementations.md").read_text(encoding="utf-8")
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 2
    assert rows[0].startswith("| Acme &lt;b> / acme-gw | 2.4.1 | — | 2026-09-21 | p | replay |"), rows[0]
    assert "| success (" in rows[0] and "vision: failure" in rows[0] and "cache, slow, tools" in rows[0]
    assert (
        "reference gateway (embedded)" in rows[1]
        and "| partial (" in rows[1]
        and "core rules not run" in rows[1]
    )
    html = (out / "implementations.html").read_text(encoding="utf-8")
    assert "Acme &lt;b&gt;" in html and "<b>Acme <b>" not in html
    assert 'href="javascript' not in html  # a vendor's URL becomes a link only when it is http(s)
    assert implementations_markdown([]) and "<table" in implementations_html([])


def test_a_folder_with_a_file_that_is_not_a_consistent_report_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = build_report([_document(ALL_CORE_PASS)], {"p": CATALOG}, Implementation())
    report["profiles"][0]["core"]["result"] = "failure"
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(report), encoding="utf-8")
    assert main(["report", "--implementations", str(tmp_path), "--out", str(tmp_path / "o")]) == EXIT_CONFIG
    assert "its statistics give success" in capsys.readouterr().err


# --- certify's options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--implementation-org", "Acme"], "--implementation* describe your gateway"),
        (["--kill-matrix", "/no/such.json"], "cannot read"),
        (["--profile", "ezat", "--kill-matrix", "{matrix_other}"], "which this run does not certify"),
        (["--profile", "lyrouter", "--kill-matrix", "{matrix_other}"], "another catalog"),
    ],
    ids=[
        "implementation-on-the-embedded-run",
        "no-matrix-file",
        "matrix-of-another-profile",
        "matrix-of-another-catalog",
    ],
)
def test_certify_refuses_bad_report_options_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    matrix = tmp_path / "kill-matrix.json"
    matrix.write_text(
        json.dumps(_matrix(profile="lyrouter", rules=("lyrouter/none/such",))), encoding="utf-8"
    )
    argv = [a.replace("{matrix_other}", str(matrix)) for a in argv]
    assert main(["certify", *argv, "--report-dir", str(tmp_path / "r")]) == EXIT_CONFIG
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_an_implementation_file_and_flags(tmp_path: Path) -> None:
    import argparse

    from harness.conformance.publish import prepare

    path = tmp_path / "impl.yaml"
    path.write_text(
        "organization: Acme\nproject: acme-gw\nversion: 2.4\nurl: https://acme.example\n", encoding="utf-8"
    )
    args = argparse.Namespace(
        gateway_url="http://127.0.0.1:1/v1", implementation=path, implementation_version="2.5.0",
        kill_matrix=[], profile=["ezat"], specs_dir=None,
        **{f"implementation_{k}": None for k in ("organization", "project", "url", "contact")},
    )  # fmt: skip
    assert prepare(args).implementation == Implementation("Acme", "acme-gw", "2.5.0", "https://acme.example")
    path.write_text("organisation: Acme\n", encoding="utf-8")
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown: organisation"):
        prepare(args)


def test_one_catalog_run_on_several_gateways_names_each_row() -> None:
    docs = [
        {**_document(ALL_CORE_PASS), "target": {**_document([])["target"], "description": f"reference, {g}"}}
        for g in ("ezat", "relay")
    ]
    report = build_report(docs, {"p": CATALOG}, Implementation(project="x"))
    _valid(report)
    assert inconsistencies(report) == []
    md = implementations_markdown([("r.yaml", report)])
    assert "| p (reference, ezat) |" in md and "| p (reference, relay) |" in md
