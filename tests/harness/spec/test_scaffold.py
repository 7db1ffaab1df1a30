"""Issue 15, situation 8: your own gateway's profile in minutes. `new-profile` scaffolds it from your doc,
`lint-specs` validates it, and `certify --specs-dir` runs it, without forking the suite."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.cli import main
from harness.outcomes import EXIT_CONFIG, EXIT_FAILURES, EXIT_OK
from harness.paths import cassettes_dir
from harness.replay.server import ReplayServer
from harness.spec.scaffold import TODO_EXCLUDED, sentences
from tests.harness.tiny_gateways import KEY, make_gateway, serve

DOC = """\
# Acme Gateway — Chat Completions

Acme serves OpenAI Chat Completions requests from Anthropic models. Most SDKs work unchanged.

## Errors

| status | meaning |
|---|---|
| 400 | the request is malformed |

- Streaming ends with `data: [DONE]`.

```
curl http://localhost/v1/chat/completions
```
"""


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "Acme Chat.md"
    path.write_text(DOC)
    return path


@pytest.fixture(scope="module")
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(cassettes_dir()) as server:
        yield server


def test_sentences_of_a_doc_under_their_headings() -> None:
    found = [(s.section, s.quote) for s in sentences(DOC)]
    assert found == [
        (
            "Acme Gateway — Chat Completions",
            "Acme serves OpenAI Chat Completions requests from Anthropic models.",
        ),
        ("Acme Gateway — Chat Completions", "Most SDKs work unchanged."),
        ("Errors", "status | meaning"),
        ("Errors", "400 | the request is malformed"),
        ("Errors", "Streaming ends with `data: [DONE]`."),
    ]


def _map_every_sentence(specs: Path) -> None:
    ledger_path = specs / "coverage" / "acme.yaml"
    ledger = yaml.safe_load(ledger_path.read_text())
    for sentence in ledger["sentences"]:
        if sentence.get("excluded") == TODO_EXCLUDED:
            sentence["excluded"] = "Not tested yet by this first profile (a deliberate gap)."
    ledger_path.write_text(yaml.safe_dump(ledger, sort_keys=False))


def test_new_profile_then_lint(tmp_path: Path, doc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = tmp_path / "specs"
    assert main(["new-profile", "acme", "--doc", str(doc), "--specs-dir", str(specs)]) == EXIT_OK
    for name in ("acme/profile.yaml", "acme/response.yaml", "coverage/acme.yaml", "docs/acme-chat.md"):
        assert (specs / name).is_file(), name
    ledger = yaml.safe_load((specs / "coverage" / "acme.yaml").read_text())
    assert [s["quote"] for s in ledger["sentences"]] == [
        q for _, q in [(s.section, s.quote) for s in sentences(DOC)]
    ]
    assert ledger["sentences"][0]["rules"] == ["acme/response/plain-text-answer"]
    # A fresh scaffold is not done: every sentence but the first is still to map.
    capsys.readouterr()
    assert main(["lint-specs", "--specs-dir", str(specs)]) == EXIT_FAILURES
    assert "4 sentence(s) still to map" in capsys.readouterr().out
    _map_every_sentence(specs)
    assert main(["lint-specs", "--specs-dir", str(specs)]) == EXIT_OK
    # The linter catches what would go wrong: a quote not in the doc, an undeclared role, a ledger gap.
    rules_path = specs / "acme" / "response.yaml"
    rules = yaml.safe_load(rules_path.read_text())
    rules["rules"][0]["source"]["quote"] = "Acme never fails."
    rules["rules"][0]["request"]["body"]["model"] = "$MODEL_FAST"
    rules["rules"].append(
        {**rules["rules"][0], "id": "acme/response/second", "request": {"body": {"model": "x"}}}
    )
    rules_path.write_text(yaml.safe_dump(rules, sort_keys=False))
    capsys.readouterr()
    assert main(["lint-specs", "--specs-dir", str(specs)]) == EXIT_FAILURES
    out = capsys.readouterr().out
    assert "acme/response/plain-text-answer: the quote is not in acme-chat.md: 'Acme never fails.'" in out
    assert "model role $MODEL_FAST is not declared" in out
    assert "rule acme/response/second is in no sentence's rules" in out
    # And the scaffold never overwrites a profile.
    assert main(["new-profile", "acme", "--doc", str(doc), "--specs-dir", str(specs)]) == EXIT_CONFIG


@pytest.mark.e2e
def test_certify_a_scaffolded_profile_from_specs_dir(
    tmp_path: Path, doc: Path, replay: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = tmp_path / "specs"
    assert main(["new-profile", "acme", "--doc", str(doc), "--specs-dir", str(specs)]) == EXIT_OK
    out = tmp_path / "report"
    with serve(make_gateway(replay.url)) as gateway:
        argv = ["certify", "--specs-dir", str(specs), "--profile", "acme", "--gateway-url", f"{gateway}/v1",
                "--gateway-key", KEY, "--replay-url", replay.url, "--report-dir", str(out)]  # fmt: skip
        code = main(argv)
        printed = capsys.readouterr().out
        assert code == EXIT_OK, printed
        document = json.loads((out / "acme" / "results.json").read_text())
        assert [(r["rule_id"], r["outcome"]) for r in document["results"]] == [
            ("acme/response/plain-text-answer", "PASS")
        ]
        assert document["profile"]["doc"] == "acme-chat"
        assert (out / "certificate.html").is_file()
        # The rerun line works pasted into a shell (the key by reference, the replay upstream at its URL).
        rerun = document["results"][0]["rerun"]
        assert rerun.startswith('GC_GATEWAY_KEY="$GC_GATEWAY_KEY" gateway-conformance certify --gateway-url')
        assert KEY not in rerun
        env = {**os.environ, "GC_GATEWAY_KEY": KEY}
        rerun_dir = tmp_path / "rerun"
        # `gateway-conformance` is `python3 -m harness.cli`; the module form runs this checkout's code.
        shell = rerun.replace("gateway-conformance", "python3 -m harness.cli", 1)
        proc = subprocess.run(
            ["bash", "-c", f"{shell} --report-dir {rerun_dir}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
        rerun_doc = json.loads((rerun_dir / "acme" / "results.json").read_text())
        assert [r["rule_id"] for r in rerun_doc["results"]] == ["acme/response/plain-text-answer"]
