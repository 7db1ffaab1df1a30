"""The README's claims about real gateways are the stored runs' (issue 33): its table is what `report
--implementations implementations` makes of the stored reports, implementations/implementations.md is what it
writes, every link there reaches a stored exchange, each report is the digest of the results beside it, and
every rule the README's short read names against a vendor failed in that vendor's stored runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from harness.conformance.implementations import findings_markdown, implementations_markdown
from harness.conformance.publish import TABLE_BEGIN, TABLE_END, load_folder, readme_table, stored_results
from harness.conformance.report import outcomes_digest

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "implementations"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_table_is_the_stored_reports_table() -> None:
    start = README.index(TABLE_BEGIN)
    shown = README[README.index("\n", start) + 1 : README.index(TABLE_END, start)].strip()
    assert shown == readme_table(FOLDER), (
        "regenerate: gateway-conformance report --implementations implementations --out implementations --readme README.md"
    )


def test_implementations_md_is_what_report_writes() -> None:
    reports = load_folder(FOLDER)
    want = (
        implementations_markdown(reports)
        + "\n"
        + findings_markdown(reports, stored_results(FOLDER, reports), "")
    )
    assert (FOLDER / "implementations.md").read_text(encoding="utf-8") == want


def test_every_exchange_link_is_stored() -> None:
    text = (FOLDER / "implementations.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)]+\.json)\)", text)
    assert links
    missing = [link for link in links if not (FOLDER / link).is_file()]
    assert missing == []


def test_each_report_is_the_digest_of_its_results() -> None:
    for report_path in FOLDER.rglob("conformance-report.yaml"):
        report = yaml.safe_load(report_path.read_text(encoding="utf-8"))
        results = json.loads((report_path.parent / "results.json").read_text(encoding="utf-8"))
        (profile,) = report["profiles"]
        assert profile["outcomes_sha256"] == outcomes_digest(results["results"]), report_path
        impl = report["implementation"]
        assert impl["version"] and impl["setup"]["summary"], f"{report_path}: version and set-up"


def _failing(peer: str) -> set[str]:
    out = set()
    for path in FOLDER.glob(f"{peer}-*/*/results.json"):
        out |= {
            r["rule_id"] for r in json.loads(path.read_text())["results"] if r["outcome"] in ("FAIL", "WARN")
        }
    return out


# Each gateway's bullet in the README's short read, and its folder prefix under implementations/.
READ_BULLETS = (
    ("portkey", "**Portkey"),
    ("litellm", "**LiteLLM"),
    ("smg", "**SMG"),
    ("ccr", "**Claude Code Router"),
    ("tensorzero", "**TensorZero"),
    ("claude-gateway", "**Claude apps gateway"),
)


def test_every_stored_gateway_has_a_short_read() -> None:
    stored = {path.name.rsplit("-", 1)[0] for path in FOLDER.iterdir() if path.is_dir()}
    assert stored == {peer for peer, _ in READ_BULLETS}


def test_every_rule_the_readme_names_against_a_vendor_failed_in_its_stored_runs() -> None:
    read = README[README.index("## Real gateways\n") :]
    read = read[: read.index("\n## ")]
    for peer, name in READ_BULLETS:
        bullet = read[read.index(f"- {name}") :]
        bullet = bullet[: bullet.find("\n- ", 3) if "\n- " in bullet[3:] else len(bullet)]
        rule = r"`((?:openai|anthropic|responses|ezat)/[a-z0-9-]+/[a-z0-9-]+)`"
        failing_part, _, passing_part = bullet.partition("Not found on")
        claimed = set(re.findall(rule, failing_part))
        assert claimed, peer
        assert claimed <= _failing(peer), f"{peer}: named but not failing: {sorted(claimed - _failing(peer))}"
        # what the README says no longer happens: each rule named there passed in every variant of the stored run
        for gone in re.findall(rule, passing_part):
            outcomes = _outcomes(peer, gone)
            assert outcomes == {"PASS"}, f"{peer}: {gone} said to pass, stored outcomes {outcomes}"


def _outcomes(peer: str, rule: str) -> set[str]:
    out: set[str] = set()
    for path in FOLDER.glob(f"{peer}-*/*/results.json"):
        out |= {r["outcome"] for r in json.loads(path.read_text())["results"] if r["rule_id"] == rule}
    return out


def test_each_stored_report_verifies_against_this_suite() -> None:
    """The README's verify-report command holds for every stored run: same suite version, catalog and cassette
    digest. A catalog change makes this fail until the peers are re-run (peers/certify.sh, about 3 minutes):
    a stored verdict about a vendor is always one this tree reproduces."""
    from harness.conformance.publish import verify, verify_results

    for report_path in FOLDER.rglob("conformance-report.yaml"):
        report = yaml.safe_load(report_path.read_text(encoding="utf-8"))
        results = json.loads((report_path.parent / "results.json").read_text(encoding="utf-8"))
        problems = verify(report) + verify_results(report, [results])
        assert problems == [], (
            f"{report_path}: {problems} (re-run: PEERS=/tmp/gc-peers bash peers/certify.sh)"
        )
