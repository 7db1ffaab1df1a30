"""Static checks of the rule catalogs and the cassettes they name: every file loads, every JSONPath parses,
every cassette a rule names exists, loads, carries provenance and no secret, and answers both stream flags."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from harness.cassette.document import load_named
from harness.checks.matchers import find
from harness.families import endpoint_kind
from harness.paths import cassettes_dir
from harness.spec import load_rule_file
from harness.spec.selection import rule_files

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
PROFILES = sorted(p.parent.name for p in SPECS.glob("*/profile.yaml"))
RULE_FILES = [path for profile in PROFILES for path in rule_files(SPECS / profile)]
PATH_KINDS = ("json", "chunks", "upstream")


@cache
def _load(path: Path):  # type: ignore[no-untyped-def]
    return load_rule_file(path)


def all_rules() -> list[object]:
    return [rule for path in RULE_FILES for rule in _load(path).rules]


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rule_file_loads(path: Path) -> None:
    assert _load(path).rules


def test_rule_ids_are_unique_across_files() -> None:
    seen: dict[str, str] = {}
    for path in RULE_FILES:
        for rule in _load(path).rules:
            assert rule.id not in seen, f"{rule.id} in {path} and {seen[rule.id]}"
            seen[rule.id] = str(path)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_rule_paths_parse(rule) -> None:  # type: ignore[no-untyped-def]
    for expect in (rule.expect, *(w["expect"] for w in rule.when), *(t["expect"] for t in rule.then)):
        for kind in PATH_KINDS:
            for assertion in expect.get(kind, ()):
                find({}, assertion["path"])  # raises PathError on a bad RFC 9535 path


def _cassette_names() -> list[str]:
    names = set()
    for rule in all_rules():
        if rule.upstream and "cassette" in rule.upstream:
            named = rule.upstream["cassette"]
            # A cassette set (profile openai) names one cassette per provider family.
            names.update(named.values() if isinstance(named, dict) else [named])
    return sorted(names)


@pytest.mark.parametrize("name", _cassette_names())
def test_named_cassette_loads(name: str) -> None:
    cassette = load_named(name, cassettes_dir())
    assert cassette.metadata.origin in ("recorded", "synthesized")
    flags = {it.request.stream for it in cassette.interactions}
    if all(endpoint_kind(it.request.path) == "anthropic.count_tokens" for it in cassette.interactions):
        assert flags == {False}, f"{name}: count_tokens does not stream"  # wire-reference §1.9
        return
    assert flags == {False, True}, f"{name}: needs a non-streaming and a streaming interaction, has {flags}"


ANTHROPIC = sorted((ROOT / "cassettes" / "anthropic").glob("*.yaml"))


@pytest.mark.parametrize("path", ANTHROPIC, ids=lambda p: p.stem)
def test_synthesized_sse_bodies_name_every_event(path: Path) -> None:
    """wire-reference §1.7: every event has an `event:` line equal to data.type, one blank line after each."""
    import json

    cassette = load_named(f"anthropic/{path.stem}", cassettes_dir())
    for interaction in cassette.interactions:
        if not interaction.response.is_sse:
            continue
        text = interaction.response.body.decode("utf-8")
        assert text.endswith("\n\n")
        for block in text[:-2].split("\n\n"):
            event, data = block.split("\n")
            assert event.startswith("event: ") and data.startswith("data: ")
            assert json.loads(data[6:])["type"] == event[7:]


OPENAI = sorted((ROOT / "cassettes" / "openai").glob("*.yaml"))


@pytest.mark.parametrize("path", OPENAI, ids=lambda p: p.stem)
def test_openai_cassettes_are_openai_compatible(path: Path) -> None:
    """wire-reference §2.1-§2.5/§2.7: the /chat/completions endpoint, provider openai, an x-request-id on every
    answer; streams are `data:` lines only (no `event:`), chunk objects, one `choices: []` usage chunk, then
    `data: [DONE]`; non-streamed answers are chat.completion objects or error envelopes."""
    import json

    from harness.families import endpoint_kind

    cassette = load_named(f"openai/{path.stem}", cassettes_dir())
    assert cassette.metadata.provider == "openai"
    for interaction in cassette.interactions:
        assert endpoint_kind(interaction.request.path) == "openai.chat"
        assert interaction.response.headers.get("x-request-id"), "every answer carries x-request-id"
        text = interaction.response.body.decode("utf-8")
        if not interaction.response.is_sse:
            body = json.loads(text)
            if interaction.response.status == 200:
                assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
            else:
                assert set(body["error"]) >= {"message", "type", "param", "code"}
            continue
        assert text.endswith("data: [DONE]\n\n")
        events = text[:-2].split("\n\n")
        payloads = []
        for block in events:
            assert block.startswith("data: ") and "\n" not in block, f"not a single data line: {block[:80]!r}"
            payloads.append(block[6:])
        assert payloads[-1] == "[DONE]"
        chunks = [json.loads(p) for p in payloads[:-1]]
        assert all(c["object"] == "chat.completion.chunk" and c["id"].startswith("chatcmpl-") for c in chunks)
        assert len({c["id"] for c in chunks}) == 1
        usage_chunks = [
            i for i, c in enumerate(chunks) if c["choices"] == [] and isinstance(c.get("usage"), dict)
        ]
        assert usage_chunks == [len(chunks) - 1], "exactly one usage chunk, last before [DONE]"


def test_lyrouter_rules_pick_cassettes_by_channel_kind() -> None:
    """The replay upstream answers an OpenAI-compatible channel only from `openai/` cassettes and an Anthropic one
    only from `anthropic/` ones (it matches by endpoint), so a lyrouter rule's model role and cassette must agree."""
    import yaml

    profile = yaml.safe_load((SPECS / "lyrouter" / "profile.yaml").read_text(encoding="utf-8"))
    anthropic_roles = {
        role
        for role, spec in profile["models"].items()
        if "Anthropic-protocol channel" in spec["description"] or role in ("MODEL_DEFAULT",)
    }
    problems = []
    for rule in all_rules():
        if rule.profile != "lyrouter" or not rule.upstream or "cassette" not in rule.upstream:
            continue
        if rule.expect.get("upstream_calls") == 0:  # refused before routing: the cassette is never read
            continue
        model = (
            rule.request.get("body", {}).get("model") if isinstance(rule.request.get("body"), dict) else None
        )
        if not isinstance(model, str) or not model.startswith("$"):
            continue
        kind = "anthropic" if model[1:] in anthropic_roles else "openai"
        if not rule.upstream["cassette"].startswith(f"{kind}/"):
            problems.append(
                f"{rule.id}: {model} is served by an {kind} channel, cassette {rule.upstream['cassette']}"
            )
    assert not problems, "\n".join(problems)


GEMINI = sorted((ROOT / "cassettes" / "gemini").glob("*.yaml"))


@pytest.mark.parametrize("path", GEMINI, ids=lambda p: p.stem)
def test_gemini_cassettes_speak_the_gemini_rest_api(path: Path) -> None:
    """The Gemini API's REST wire (google-genai types): `:generateContent` answers one GenerateContentResponse,
    `:streamGenerateContent?alt=sse` answers CRLF-framed `data:` events with no sentinel, each one a whole
    response object; the last carries finishReason and usageMetadata. Function calls have no id. The official
    SDK's own types parse every answer."""
    import json

    from google.genai import types

    from harness.families import endpoint_kind

    cassette = load_named(f"gemini/{path.stem}", cassettes_dir())
    assert cassette.metadata.provider == "gemini" and cassette.metadata.origin == "synthesized"
    for interaction in cassette.interactions:
        request = interaction.request
        assert endpoint_kind(request.path) == "gemini.generate"
        assert request.path.startswith("/v1beta/models/")
        assert request.uri.endswith(
            ":streamGenerateContent?alt=sse" if request.stream else ":generateContent"
        )
        assert "stream" not in request.json, "Gemini streams by path, never by a body field"
        text = interaction.response.body.decode("utf-8")
        if interaction.response.status != 200:
            error = json.loads(text)["error"]
            assert error["code"] == interaction.response.status and error["status"].isupper()
            continue
        if not interaction.response.is_sse:
            answer = types.GenerateContentResponse.model_validate(json.loads(text))
            assert answer.candidates and answer.candidates[0].finish_reason is not None
            assert answer.usage_metadata and answer.usage_metadata.total_token_count
            assert all(c.id is None for c in answer.function_calls or [])
            continue
        assert text.endswith("\r\n\r\n") and "[DONE]" not in text
        events = text[:-4].split("\r\n\r\n")
        assert all(e.startswith("data: ") and "\n" not in e for e in events)
        answers = [types.GenerateContentResponse.model_validate(json.loads(e[6:])) for e in events]
        finishes = [a.candidates[0].finish_reason for a in answers]
        assert finishes[-1] is not None and all(f is None for f in finishes[:-1])
        assert len({a.response_id for a in answers}) == 1


def test_a_rule_timing_a_stream_against_its_provider_paces_the_provider() -> None:
    """`streamed: {fraction}` measures the spread of the content events against the provider's paced time: a rule
    that names it paces its upstream (unpaced, the check would have only its `seconds` to go by)."""
    for rule in all_rules():
        streamed = rule.expect.get("streamed")
        if isinstance(streamed, dict) and "fraction" in streamed:
            assert float((rule.upstream or {}).get("pacing") or 0) > 0, rule.id
            streams_always = rule.request.get("transport") == "websocket"  # its answer is always events
            assert streams_always or dict(rule.variants).get("stream") in ([True], (True,)), rule.id
