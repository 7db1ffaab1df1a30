"""Cassette scenarios (harness/cassette/scenario.py): every shipped cassette states one and shows it; the checks
name what a recording lacks; a stream's derived non-stream answer is the same generation (derive.py); record
writes into the current project's ./cassettes, never into an installed package."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness import paths
from harness.cassette.document import load_cassette
from harness.cassette.scenario import parse_scenario, with_nonce
from harness.checks.answer import summarize as read_answer
from harness.errors import CassetteError, ConfigError
from harness.families import endpoint_kind
from harness.record.command import cassettes_folder
from harness.record.derive import derive_nonstream
from harness.record.scenario_check import _served, cassette_problems, problems

CASSETTES = paths.cassettes_dir()
FILES = sorted(CASSETTES.glob("*/*.yaml"))


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("path", FILES, ids=[_name(p) for p in FILES])
def test_every_cassette_states_its_scenario_and_shows_it(path: Path) -> None:
    cassette = load_cassette(path, name=_name(path))
    scenario = parse_scenario(cassette.scenario, path)
    assert scenario is not None, (
        "every cassette states its scenario (harness/cassette/synthesize/scenarios.py)"
    )
    assert cassette_problems(cassette, scenario) == []
    if scenario.recordable:
        assert scenario.request and scenario.expect
    else:
        assert scenario.why


def test_every_cassette_has_its_scenario_in_the_generator() -> None:
    from harness.cassette.synthesize.scenarios import SCENARIOS

    assert set(SCENARIOS) == {_name(p) for p in FILES}


def _cassette(name: str) -> Any:
    return load_cassette(CASSETTES / f"{name}.yaml", name=name)


@pytest.mark.parametrize(
    ("scenario_of", "answer_of", "want"),
    [
        ("anthropic/refusal", "anthropic/text-basic", "stop_reason: got end_turn, want refusal"),
        ("anthropic/max-tokens", "anthropic/text-basic", "stop_reason: got end_turn, want max_tokens"),
        ("openai/content-filter", "openai/text-basic", "stop_reason: got stop, want content_filter"),
        ("openai/length", "openai/tool-call", "stop_reason: got tool_calls, want length"),
        ("gemini/max-tokens", "gemini/text-basic", "stop_reason: got STOP, want MAX_TOKENS"),
        (
            "anthropic/tool-use-single",
            "anthropic/text-basic",
            "blocks: got [text], want [tool_use(get_weather)]",
        ),
        ("anthropic/thinking", "anthropic/text-basic", "blocks: got [text], want [thinking, text]"),
        (
            "anthropic/cache-read",
            "anthropic/cache-write",
            "usage cache_read_input_tokens: got 0, want at least 1024",
        ),
        (
            "anthropic/cache-write",
            "anthropic/cache-read",
            "usage cache_creation_input_tokens: got 0, want at least 1024",
        ),
        ("anthropic/text-plus-tool", "anthropic/tool-use-parallel", "tool get_weather: arguments invalid"),
        ("anthropic/json-answer", "anthropic/text-basic", "text: not JSON"),
        ("anthropic/stop-sequence", "anthropic/max-tokens", "stop_sequence: got null, want 5"),
        ("anthropic/long-text", "anthropic/text-basic", "text deltas: got 4, want at least 20"),
        ("anthropic/error-429", "anthropic/error-500", "status: got 500, want 429"),
    ],
)
def test_a_recording_without_the_scenario_is_named(scenario_of: str, answer_of: str, want: str) -> None:
    scenario = parse_scenario(_cassette(scenario_of).scenario, Path(scenario_of))
    assert scenario is not None
    stream = [it for it in _cassette(answer_of).interactions if it.request.stream][-1]
    found = problems(scenario.expect, stream)
    assert any(p.startswith(want) for p in found), found


def test_scenario_blocks_are_validated() -> None:
    good = {"recordable": True, "request": {"model": "m"}, "expect": {"stop_reason": "end_turn"}}
    assert parse_scenario(good, Path("x")) is not None
    for bad, message in [
        ({**good, "expect": {"stop": "x"}}, "unknown scenario.expect keys: stop"),
        ({**good, "extra": 1}, "unknown scenario keys: extra"),
        ({"recordable": False, "expect": {"status": 500}}, "says `why`"),
        ({"recordable": True, "expect": {"status": 500}}, "needs its `request`"),
        ({**good, "expect": {}}, "at least one property"),
    ]:
        with pytest.raises(CassetteError, match=message.replace("(", r"\(")):
            parse_scenario(bad, Path("x"))
    primed = parse_scenario({**good, "prime": True}, Path("x"))
    assert primed is not None and primed.prime == good["request"]


def test_a_nonce_makes_each_attempt_new() -> None:
    body = {"system": [{"text": "policy ${nonce}."}], "n": 1}
    assert with_nonce(body, "ab12") == {"system": [{"text": "policy ab12."}], "n": 1}


PAIRS = [
    p
    for p in FILES
    if (c := load_cassette(p)).interactions
    and len(c.interactions) == 2
    and all(it.response.status == 200 for it in c.interactions)
    and c.interactions[1].request.stream
    and not (c.scenario or {}).get("expect", {}).get("status")
]


@pytest.mark.parametrize("path", PAIRS, ids=[_name(p) for p in PAIRS])
def test_the_derived_answer_is_the_streams_generation(path: Path) -> None:
    """Each shipped pair was synthesized as one generation: deriving the non-stream answer from the stream gives
    what the shipped non-stream answer says (text, thinking, stop reason, tool calls, usage)."""
    plain, stream = load_cassette(path).interactions
    kind = endpoint_kind(stream.request.path)
    assert kind is not None
    derived = derive_nonstream(stream, plain.request.json or {}, kind)
    got, want = read_answer(_served(derived)), read_answer(_served(plain))
    assert got is not None and want is not None
    assert got.text == want.text and got.thinking == want.thinking
    assert got.stop_reason == want.stop_reason and got.model == want.model
    assert [(t.name, t.arguments) for t in got.tool_uses] == [(t.name, t.arguments) for t in want.tool_uses]
    assert dict(got.usage) == dict(want.usage)
    assert not derived.request.stream and derived.response.content_type.startswith("application/json")


def test_record_writes_to_the_projects_cassettes_seeded_from_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    folder = cassettes_folder(None, dry_run=False, out=out)
    assert folder == (tmp_path / "cassettes").resolve()
    assert (folder / "anthropic" / "text-basic.yaml").read_bytes() == (
        CASSETTES / "anthropic" / "text-basic.yaml"
    ).read_bytes()
    assert not list(folder.glob("*/_*.py"))  # the data, not the suite's generator scripts
    assert f"writing to {folder} (seeded from the suite's set at {CASSETTES.resolve()})" in out.getvalue()
    again = io.StringIO()
    assert cassettes_folder(None, dry_run=False, out=again) == folder
    assert "./cassettes of the current project" in again.getvalue()


def test_record_refuses_to_write_into_an_installed_package(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = Path(paths.__file__).resolve().parent / "_data" / "cassettes"
    with pytest.raises(ConfigError, match="inside the installed package"):
        cassettes_folder(installed, dry_run=False, out=io.StringIO())


def test_a_dry_run_without_a_project_folder_reads_the_suites_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cassettes_folder(None, dry_run=True, out=io.StringIO()) == CASSETTES.resolve()
    assert not (tmp_path / "cassettes").exists()


def test_a_fault_recording_is_described_by_its_scenario() -> None:
    cassette = _cassette("anthropic/stream-error-overloaded")
    scenario = parse_scenario(cassette.scenario, cassette.path)
    assert scenario is not None and not scenario.recordable
    edited = replace(scenario, expect={"status": 529, "error_type": "rate_limit_error"})
    assert cassette_problems(cassette, edited) == [
        "#0 (non-stream) error type: got overloaded_error, want rate_limit_error"
    ]
