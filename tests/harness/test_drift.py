"""`drift`: an edited copy of a gateway's doc, made in the test, against the real rules and ledgers.

The shipped docs live beside their profiles (`specs/<profile>/<doc>.md`), so nothing here skips on a fresh
clone. The unit tests of the sentence reader and of `compare` use small docs written here.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness import drift
from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


DOCS = ROOT / "specs"  # the bundled profiles ship their docs beside them: specs/<profile>/<doc>.md


SMALL_DOC = """# Title

The lead is not in any section: it must be ignored.

## Limits

Requests can be up to 32 MB. Larger ones are refused with `413`.
Nice weather today.

| Field | What happens |
| --- | --- |
| `n` above 1 | Refused |

```json
{"must": "never be read: code"}
```

### Details

- **Retries** happen at most 3 times.
"""


def rule(rule_id: str, quote: str, doc: str = "small") -> SimpleNamespace:
    return SimpleNamespace(id=rule_id, source=SimpleNamespace(doc=doc, quote=quote))


def test_sentences_skip_lead_code_headers_and_keep_subsections_in_their_section() -> None:
    sentences = list(drift.doc_sentences(SMALL_DOC))
    assert ("Limits", "Requests can be up to 32 MB.") in sentences
    assert ("Limits", "Larger ones are refused with `413`.") in sentences
    assert ("Limits", "| `n` above 1 | Refused |") in sentences
    assert ("Limits", "**Retries** happen at most 3 times.") in sentences
    texts = [s for _, s in sentences]
    assert not any("lead" in s or "code" in s for s in texts)
    assert "| Field | What happens |" not in texts


def test_normative_sentences() -> None:
    assert drift.is_normative("Requests can be up to 32 MB.")
    assert drift.is_normative("Use `json_schema`.")
    assert not drift.is_normative("Nice weather today.")


def test_compare_finds_changed_vanished_and_uncovered() -> None:
    rules = [
        rule("p/a/limit", "Requests can be up to 16 MB."),  # changed: 32 in the doc now
        rule("p/a/gone", "Streams carry a heartbeat every second."),
        rule("p/a/ok", "Larger ones are refused with `413`."),
        rule("other/a/x", "not our doc at all", doc="other"),
    ]
    ledger = [
        {"section": "Limits", "quote": "| `n` above 1 | Refused |"},
        {"section": "Limits", "quote": "A sentence that was deleted from the doc."},
    ]
    report = drift.compare("p", "small", SMALL_DOC, rules, ledger)
    by_id = {d.where: d for d in report.rules}
    assert set(by_id) == {"p/a/limit", "p/a/gone"}
    assert by_id["p/a/limit"].status == "changed"
    assert by_id["p/a/limit"].closest == "Requests can be up to 32 MB."
    assert by_id["p/a/gone"].status == "vanished"
    assert [d.quote for d in report.ledger] == ["A sentence that was deleted from the doc."]
    uncovered = {u.sentence for u in report.uncovered}
    assert uncovered == {"Requests can be up to 32 MB.", "**Retries** happen at most 3 times."}
    assert report.drifted


def test_compare_of_a_fully_covered_doc_is_clean() -> None:
    text = "## S\n\nAlways send a key. Keys are never logged.\n"
    report = drift.compare(
        "p",
        "small",
        text,
        [rule("p/a/b", "Always send a key.")],
        [{"section": "S", "quote": "Keys are never logged."}],
    )
    assert not report.drifted


def write_doc(tmp_path: Path, profile: str, edit: object = None) -> Path:
    text = (DOCS / profile / f"{profile}-chat-completions.md").read_text(encoding="utf-8")
    if callable(edit):
        text = edit(text)
    path = tmp_path / f"{profile}.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("profile", ["ezat", "lyrouter"])
def test_the_shipped_docs_have_no_drift(
    profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The way a user checks a ledger against a doc: exit 0, nothing listed."""
    assert cli_main(["drift", "--profile", profile, "--doc", str(write_doc(tmp_path, profile))]) == 0
    assert "verdict: no drift" in capsys.readouterr().out


@pytest.mark.e2e
def test_an_edited_ezat_doc_drifts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def edit(text: str) -> str:
        assert "The host must be a public address." in text
        text = text.replace("The host must be a public address.", "The host should be a public address.")
        assert "| `402` | `insufficient_quota` | `insufficient_quota` |" in text
        text = "\n".join(line for line in text.splitlines() if not line.startswith("| `402` |"))
        text = text.replace(
            "The whole request body can be up to 32 MB.",
            "The whole request body can be up to 32 MB. Requests are refused after 3 retries per minute.",
        )
        return text

    doc = write_doc(tmp_path, "ezat", edit)
    assert cli_main(["drift", "--profile", "ezat", "--doc", str(doc), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    changed = {d["where"]: d for d in report["rules"]}
    assert changed["ezat/images/private-url-refused"]["status"] == "changed"
    assert "should be a public address" in changed["ezat/images/private-url-refused"]["closest"]
    assert "ezat/errors/upstream-billing-error" in changed
    assert any("insufficient_quota" in d["quote"] for d in report["ledger"])
    assert [u["sentence"] for u in report["uncovered"]] == [
        "Requests are refused after 3 retries per minute."
    ]
    assert report["drifted"] is True


@pytest.mark.e2e
def test_an_edited_lyrouter_doc_drifts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def edit(text: str) -> str:
        sentence = "Once streaming output has started, the gateway no longer switches channels."
        assert sentence in text
        return text.replace(sentence, "")

    doc = write_doc(tmp_path, "lyrouter", edit)
    assert cli_main(["drift", "--profile", "lyrouter", "--doc", str(doc)]) == 1
    out = capsys.readouterr().out
    assert "no longer switches channels" in out
    assert "ledger sentences that are gone: 0" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "nobody", "--doc", "README.md"], "no profile 'nobody'"),
        (["--profile", "ezat", "--doc", "does/not/exist.md"], "no such file"),
        (["--doc", "README.md"], ""),  # no --profile: a usage error (without --doc, the shipped doc is read)
    ],
    ids=["unknown-profile", "missing-doc", "usage-error"],
)
def test_bad_configuration_exits_3(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["drift", *argv]) == 3
    assert message in capsys.readouterr().err


def test_a_profile_without_a_ledger_is_bad_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = tmp_path / "specs"
    (specs / "p").mkdir(parents=True)
    (specs / "p" / "profile.yaml").write_text(
        (ROOT / "specs" / "ezat" / "profile.yaml")
        .read_text(encoding="utf-8")
        .replace("profile: ezat", "profile: p"),
        encoding="utf-8",
    )
    doc = tmp_path / "doc.md"
    doc.write_text("## S\n\nText.\n", encoding="utf-8")
    assert cli_main(["drift", "--profile", "p", "--doc", str(doc), "--specs", str(specs)]) == 3
    assert "no coverage ledger" in capsys.readouterr().err


RELAY_STYLE = """Chat completions

POST /v1/chat/completions — the primary endpoint. It is OpenAI-compatible.

#Request

{ "model": "gpt-4o", "stream": false }

A metadata object is read and then removed.

#Streaming

data: {"choices": []}

The stream must end with data: [DONE].
"""


def test_a_doc_without_level_two_headings_has_its_hash_headings_and_title_as_sections() -> None:
    """The relay doc writes `#Heading` and starts with its page title: drift once read no sentence of it."""
    found = list(drift.doc_sentences(RELAY_STYLE))
    assert found == [
        ("Chat completions", "POST /v1/chat/completions — the primary endpoint."),
        ("Chat completions", "It is OpenAI-compatible."),
        ("Request", "A metadata object is read and then removed."),
        ("Streaming", "The stream must end with data: [DONE]."),
    ]  # the unfenced JSON and SSE examples are not sentences
