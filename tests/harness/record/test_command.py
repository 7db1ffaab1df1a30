"""harness.record.command: re-recording cassettes against fake Anthropic, OpenAI and Gemini providers on loopback
(nothing leaves it), table-driven over the three families."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from harness import paths, sse
from harness.cassette.document import load_cassette
from harness.cli import main as cli_main
from harness.record.command import api_host, diff_cassettes, fault_reason
from harness.record.providers import PROVIDERS, gemini_path
from tests.harness.fake_providers import APPS, DEFAULT_STOP, FakeProvider
from tests.harness.tiny_gateways import serve

CASSETTES = paths.cassettes_dir()
SOURCE = CASSETTES / "anthropic"
SSE_NAMES = [
    "message_start",
    "content_block_start",
    "ping",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
]


def main(argv: list[str]) -> int:
    return cli_main(["record", *argv])


@dataclass(frozen=True)
class Family:
    name: str
    key_env: str
    key: str  # built by concatenation so that no secret-shaped literal sits in the repository
    suffix: str  # what the base URL adds to the fake's root (the OpenAI SDK's base URL carries /v1)
    faults: dict[str, str]  # shipped fault cassettes copied too → the reason `record` prints
    credential: tuple[str, tuple[str, ...]]  # the stored credential header, redacted
    echoed: tuple[tuple[str, ...], ...]  # what an echoed key becomes (vcrpy's placeholder or the harness's)
    model: str  # the model the fake's answer names
    changed_stop: str
    stop_diff: str  # the diff line's start when the stop reason changes
    api_version: str | None  # None: the version header the SDK sent
    fail_line: str
    paths: tuple[str, str]  # the non-streaming and streaming request paths the provider saw


FAMILIES = (
    Family(
        name="anthropic",
        key_env="ANTHROPIC_API_KEY",
        key="sk-" + "ant-" + "fake0000" * 4,
        suffix="",
        faults={
            "error-529": "interaction #0 answers HTTP 529",
            "stream-error-overloaded": "interaction #0 answers HTTP 529",
        },
        credential=("authorization", ("Bearer <REDACTED>",)),
        echoed=(("Bearer <ANTHROPIC_API_KEY>",), ("Bearer <REDACTED>",)),
        model="claude-sonnet-5-5",
        changed_stop="max_tokens",
        stop_diff="stop_reason end_turn → max_tokens",
        api_version=None,
        fail_line="FAILED at interaction #1: HTTP 401 authentication_error: invalid x-api-key",
        paths=("/v1/messages", "/v1/messages"),
    ),
    Family(
        name="openai",
        key_env="OPENAI_API_KEY",
        key="sk-" + "proj-" + "fake0000" * 4,
        suffix="/v1",
        faults={
            "error-429": "interaction #0 answers HTTP 429",
            "error-500": "interaction #0 answers HTTP 500",
        },
        credential=("authorization", ("Bearer <REDACTED>",)),
        echoed=(("Bearer <OPENAI_API_KEY>",), ("Bearer <REDACTED>",)),
        model="gpt-5.5-2026-09-18",
        changed_stop="length",
        stop_diff="finish_reason stop → length",
        api_version="v1",
        fail_line="FAILED at interaction #1: HTTP 401 invalid_request_error: Incorrect API key provided",
        paths=("/v1/chat/completions", "/v1/chat/completions"),
    ),
    Family(
        name="gemini",
        key_env="GEMINI_API_KEY",
        key="AIza" + "Fake0000" * 4 + "xyz",
        suffix="",
        faults={
            "error-503": "interaction #0 answers HTTP 503",
            "fallback-503": "interaction #0 answers HTTP 503",
        },
        credential=("x-goog-api-key", ("<REDACTED>",)),
        echoed=(("<GEMINI_API_KEY>",), ("<REDACTED>",)),
        model="gemini-2.5-flash",
        changed_stop="MAX_TOKENS",
        stop_diff="finishReason STOP → MAX_TOKENS",
        api_version="v1beta",
        fail_line="FAILED at interaction #1: HTTP 401 UNAUTHENTICATED: API key not valid",
        paths=(
            "/v1beta/models/gemini-2.5-flash:generateContent",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        ),
    ),
)
BY_NAME = {f.name: f for f in FAMILIES}
# Other ways the SDKs find credentials, base URLs or another backend must not leak into the tests.
FOREIGN_ENV = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_GEMINI_BASE_URL",
)


@dataclass
class Setup:
    family: Family
    fake: FakeProvider
    url: str
    cassettes: Path

    def record(self, *extra: str) -> int:
        argv = ["--provider", self.family.name, "--base-url", self.url + self.family.suffix]
        return main([*argv, "--cassettes-dir", str(self.cassettes), *extra])

    def path(self, name: str) -> Path:
        return self.cassettes / self.family.name / f"{name}.yaml"


@pytest.fixture(params=FAMILIES, ids=[f.name for f in FAMILIES])
def setup(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    """A fake provider of the family on loopback; a temporary cassettes dir with copies of a few shipped
    cassettes (text-basic and fault scenarios); the key set in the environment."""
    family: Family = request.param
    folder = tmp_path / "cassettes" / family.name
    folder.mkdir(parents=True)
    for name in ("text-basic", *family.faults):
        shutil.copy(CASSETTES / family.name / f"{name}.yaml", folder / f"{name}.yaml")
    for var in FOREIGN_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(family.key_env, family.key)
    fake = FakeProvider(family.name)
    with serve(APPS[family.name](fake)) as url:
        yield Setup(family, fake, url, tmp_path / "cassettes")


def test_records_json_and_sse_scrubbed_with_provenance(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    family, fake = setup.family, setup.fake
    fake.echo_key = True
    assert setup.record("--scenario", f"{family.name}/text-*") == 0
    out = capsys.readouterr().out

    path = setup.path("text-basic")
    text = path.read_text()
    assert family.key not in text and family.key not in out
    new = load_cassette(path)
    meta = new.metadata
    assert (meta.origin, meta.provider, meta.model) == ("recorded", family.name, family.model)
    assert meta.date == _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    assert meta.host == setup.url.removeprefix("http://")  # not the public API: the stamp says where
    sent_version = fake.seen[0].headers.get("anthropic-version")
    assert meta.api_version == (family.api_version or sent_version) and meta.api_version
    old = load_cassette(CASSETTES / family.name / "text-basic.yaml")
    # The description is rewritten from the recording; the provenance names the SDK and how the pair was made.
    assert meta.description == f"Recorded: stop reason {fake.stop_reason}; content [text]."
    assert meta.sdk and meta.sdk.split()[0] == PROVIDERS[family.name].sdk
    assert meta.non_stream == "derived from the recorded stream (interaction #1)"
    assert new.scenario == old.scenario

    # One generation: only the stream was sent, with the scenario's own request, and the key.
    scenario = old.scenario or {}
    assert tuple(seen.path for seen in fake.seen) == family.paths[1:]
    sent = dict(fake.seen[0].body)
    assert {k: v for k, v in sent.items() if k not in ("stream", "stream_options")} == scenario["request"]
    for it in new.interactions:
        name, value = family.credential
        assert it.request.headers.get(name) == value
        assert "key=" not in it.request.uri and family.key not in it.request.uri
        assert not {"host", "x-stainless-os", "x-stainless-arch"} & set(it.request.headers)
        for gone in ("set-cookie", "anthropic-organization-id", "openai-organization", "retry-after"):
            assert gone not in it.response.headers
        assert "content-encoding" not in it.response.headers
        assert it.response.headers["x-debug-auth"] in family.echoed
        assert all(name == name.lower() for name in (*it.request.headers, *it.response.headers))

    plain, stream = new.interactions
    assert not plain.request.stream and stream.request.stream
    assert json.loads(plain.response.body)  # stored decoded, not gzip
    assert plain.request.path == family.paths[0]
    # The derived answer is the stream's generation: the same text, stop reason and usage.
    from harness.checks.answer import summarize as read_answer
    from harness.record.scenario_check import _served

    a, b = read_answer(_served(plain)), read_answer(_served(stream))
    assert a is not None and b is not None
    assert (a.text, a.stop_reason, a.usage, a.id) == (b.text, b.stop_reason, b.usage, b.id)
    decoded = sse.decode(stream.response.body)
    assert decoded.events and not decoded.problems
    assert f"{family.name}/text-basic: recorded 2 interaction(s), model {family.model}" in out
    assert f"host {meta.host}" in out


@pytest.mark.parametrize("setup", [BY_NAME["anthropic"]], indirect=True, ids=["anthropic"])
def test_anthropic_stream_is_stored_event_by_event(setup: Setup) -> None:
    assert setup.record("--scenario", "text-basic") == 0
    stream = load_cassette(setup.path("text-basic")).interactions[1]
    assert [ev.event for ev in sse.decode(stream.response.body).events] == SSE_NAMES
    assert stream.response.body.endswith(b"\n\n")


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_only_another_host_than_the_public_api_is_stamped(family: Family) -> None:
    provider = PROVIDERS[family.name]
    assert api_host(provider.base_url, provider) is None
    assert api_host(provider.base_url.replace("https://", "https://eu."), provider) is not None
    assert api_host("http://127.0.0.1:8080/v1", provider) == "127.0.0.1:8080"
    assert api_host("http://[::1]:8080", provider) == "[::1]:8080"
    assert api_host(provider.base_url.replace("https://", "http://"), provider) is not None


def test_a_recording_that_loses_the_scenario_is_not_written(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23: a provider that now stops differently does not turn the cassette into another scenario."""
    setup.fake.stop = setup.family.changed_stop
    path = setup.path("text-basic")
    before = path.read_bytes()
    assert setup.record("--scenario", "text-basic", "--attempts", "2") == 1
    out = capsys.readouterr().out
    want = DEFAULT_STOP[setup.family.name]
    assert (
        f"{setup.family.name}/text-basic: not reproduced: stop_reason: got {setup.family.changed_stop}, "
        f"want {want} (after 2 attempts); the old cassette stays"
    ) in out
    assert f"not written (the old cassettes stay): {setup.family.name}/text-basic" in out
    assert "summary: 0 recorded, 0 not recordable, 1 not reproduced, 0 failed" in out
    assert len(setup.fake.seen) == 2  # --attempts 2: provoked twice
    assert path.read_bytes() == before
    assert not any(marker in out for marker in ("msg_", "req_", "toolu_", "chatcmpl-", "fp_"))


def test_same_behaviour_is_no_semantic_change_in_the_stream(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    assert setup.record("--scenario", "text-basic") == 0
    diff = [line.strip() for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    # The recorded stream is what the old one was; the derived non-stream answer holds only what the stream
    # carried (a field the provider adds to non-stream answers alone, such as OpenAI's `annotations`, is gone).
    changes = [line for line in diff if line != "no semantic change"]
    assert not [line for line in changes if line.startswith("#1")], diff
    assert all(line.startswith("#0 (non-stream): ") and "fields disappeared" in line for line in changes), (
        diff
    )


def test_fault_scenarios_are_skipped_and_reported(setup: Setup, capsys: pytest.CaptureFixture[str]) -> None:
    family = setup.family
    before = {name: setup.path(name).read_bytes() for name in family.faults}
    assert setup.record() == 0
    out = capsys.readouterr().out
    for name in family.faults:
        why = (load_cassette(setup.path(name)).scenario or {})["why"]
        assert f"{family.name}/{name}: not recordable: {why}" in out
    assert f"summary: 1 recorded, {len(family.faults)} not recordable, 0 not reproduced, 0 failed" in out
    assert len(setup.fake.seen) == 1  # only text-basic's stream request reached the provider
    for name, content in before.items():
        assert setup.path(name).read_bytes() == content


def test_dry_run_writes_nothing(setup: Setup, capsys: pytest.CaptureFixture[str]) -> None:
    path = setup.path("text-basic")
    before = sorted(p.name for p in path.parent.iterdir()), path.read_bytes()
    assert setup.record("--scenario", "text-basic", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "would replace" in out
    assert (sorted(p.name for p in path.parent.iterdir()), path.read_bytes()) == before


def test_provider_error_fails_the_scenario_and_keeps_the_old_cassette(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.fake.fail_status = 401
    path = setup.path("text-basic")
    before = path.read_bytes()
    assert setup.record("--scenario", "text-basic") == 1
    out = capsys.readouterr().out
    assert f"{setup.family.name}/text-basic: {setup.family.fail_line}" in out
    assert len(setup.fake.seen) == 1  # no retries, and the scenario stops at its first failure
    assert path.read_bytes() == before
    assert setup.family.key not in out
    assert "summary: 0 recorded, 0 not recordable, 0 not reproduced, 1 failed" in out


def test_a_transient_mid_stream_error_is_not_recorded(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.fake.error_mid_stream = True
    path = setup.path("text-basic")
    before = path.read_bytes()
    assert setup.record("--scenario", "text-basic") == 1
    out = capsys.readouterr().out
    if setup.family.name == "gemini":
        # google-genai raises on the error line itself: the stream's interaction fails with Gemini's status.
        assert "text-basic: FAILED at interaction #1: HTTP 503 UNAVAILABLE: The model is overloaded." in out
    else:
        assert (
            "text-basic: not reproduced: the provider answered with a fault: interaction #1 ends in a mid"
            in out
        )
    assert path.read_bytes() == before


def test_unreachable_provider_is_a_failure(setup: Setup, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--provider", setup.family.name, "--base-url", "http://127.0.0.1:9" + setup.family.suffix]
    assert main([*argv, "--cassettes-dir", str(setup.cassettes), "--scenario", "text-basic"]) == 1
    out = capsys.readouterr().out
    assert f"{setup.family.name}/text-basic: FAILED at interaction #1:" in out
    assert setup.family.key not in out


@pytest.mark.parametrize(
    ("argv", "unset", "message"),
    [
        (["--provider", "anthropic"], "ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY is not set"),
        (["--provider", "openai"], "OPENAI_API_KEY", "OPENAI_API_KEY is not set"),
        (["--provider", "gemini"], "GEMINI_API_KEY", "GOOGLE_API_KEY or GEMINI_API_KEY is not set"),
        (
            ["--provider", "mistral"],
            None,
            "unknown provider 'mistral' (known: anthropic, openai, responses, gemini)",
        ),
        (["--provider", "anthropic", "--scenario", "nope-*"], None, "no cassette under"),
        ([], None, "required: --provider"),
    ],
    ids=[
        "no-anthropic-key",
        "no-openai-key",
        "no-gemini-key",
        "unknown-provider",
        "no-scenario-matches",
        "no-provider",
    ],
)
def test_configuration_errors_exit_3(
    argv: list[str],
    unset: str | None,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for family in FAMILIES:
        monkeypatch.setenv(family.key_env, family.key)
        shutil.copytree(CASSETTES / family.name, tmp_path / family.name)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    if unset is not None:
        monkeypatch.delenv(unset)
    # No provider runs here: a configuration error must stop before any request.
    assert main([*argv, "--base-url", "http://127.0.0.1:9", "--cassettes-dir", str(tmp_path)]) == 3
    captured = capsys.readouterr()
    assert message in captured.err
    assert not any(f.key in captured.out + captured.err for f in FAMILIES)


@pytest.mark.parametrize(
    "base_url",
    ["http://127.0.0.1:9/?key=" + "AIza" + "Fake0000" * 4, "http://user:pw@127.0.0.1:9", "ftp://127.0.0.1:9"],
    ids=["key-in-query", "userinfo", "not-http"],
)
def test_a_base_url_that_could_carry_a_key_is_refused(
    base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", BY_NAME["gemini"].key)
    shutil.copytree(CASSETTES / "gemini", tmp_path / "gemini")
    assert main(["--provider", "gemini", "--base-url", base_url, "--cassettes-dir", str(tmp_path)]) == 3
    captured = capsys.readouterr()
    assert "--base-url must" in captured.err and "Fake0000" not in captured.err + captured.out


@pytest.mark.e2e
def test_gemini_uses_the_google_api_key_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """google-genai's own order: GOOGLE_API_KEY wins over GEMINI_API_KEY; the placeholder names the one used."""
    shutil.copytree(CASSETTES / "gemini", tmp_path / "gemini")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", BY_NAME["gemini"].key)
    fake = FakeProvider("gemini", echo_key=True)
    with serve(APPS["gemini"](fake)) as url:
        argv = ["--provider", "gemini", "--base-url", url, "--cassettes-dir", str(tmp_path)]
        assert main([*argv, "--scenario", "text-basic"]) == 0
    assert fake.seen[0].headers["x-goog-api-key"] == BY_NAME["gemini"].key
    stored = load_cassette(tmp_path / "gemini" / "text-basic.yaml").interactions[0].response.headers
    assert stored["x-debug-auth"] in (("<GOOGLE_API_KEY>",), ("<REDACTED>",))


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("https://h/v1beta/models/m:generateContent", ("v1beta", "models/m:generateContent")),
        (
            "https://h/v1beta/models/m:streamGenerateContent?alt=sse",
            ("v1beta", "models/m:streamGenerateContent?alt=sse"),
        ),
        (
            "https://h/v1beta/models/m:streamGenerateContent?key=<REDACTED>&alt=sse",
            ("v1beta", "models/m:streamGenerateContent?alt=sse"),
        ),
        ("https://h/v1/models/m:generateContent?key=", ("v1", "models/m:generateContent")),
    ],
    ids=["plain", "alt-sse", "key-dropped", "empty-key-dropped"],
)
def test_gemini_path_never_forwards_a_query_key(uri: str, expected: tuple[str, str]) -> None:
    assert gemini_path(uri) == expected


# --- the semantic diff and fault detection, pure ----------------------------------------------


def _with_body(index: int, edit: Any) -> tuple[Any, Any]:
    old = load_cassette(SOURCE / "text-basic.yaml")
    interactions = list(old.interactions)
    resp = interactions[index].response
    interactions[index] = replace(interactions[index], response=replace(resp, body=edit(resp.body)))
    return old, replace(old, interactions=tuple(interactions))


def _json_edit(change: Any) -> Any:
    def edit(body: bytes) -> bytes:
        data = json.loads(body)
        change(data)
        return json.dumps(data).encode()

    return edit


@pytest.mark.parametrize(
    ("index", "edit", "expected"),
    [
        (0, _json_edit(lambda d: d.update(id="msg_other")), []),
        (0, _json_edit(lambda d: d["usage"].update(output_tokens=999)), []),
        (
            0,
            _json_edit(lambda d: d["usage"].setdefault("output_tokens_details", {"thinking_tokens": 0})),
            [
                "#0 (non-stream): usage fields appeared: output_tokens_details, output_tokens_details.thinking_tokens"
            ],
        ),
        (
            0,
            _json_edit(lambda d: d["usage"].pop("service_tier")),
            ["#0 (non-stream): usage fields disappeared: service_tier"],
        ),
        (
            0,
            _json_edit(
                lambda d: d["content"].insert(0, {"type": "thinking", "thinking": "", "signature": "x"})
            ),
            ["#0 (non-stream): content blocks [text] → [thinking, text]"],
        ),
        (
            1,
            lambda b: b.replace(b'event: ping\ndata: {"type": "ping"}\n\n', b""),
            [
                "#1 (stream): SSE events [message_start, content_block_start, ping, content_block_delta*, content_block_stop, "
                "message_delta, message_stop] → [message_start, content_block_start, content_block_delta*, "
                "content_block_stop, message_delta, message_stop]"
            ],
        ),
    ],
    ids=[
        "id-ignored",
        "token-count-ignored",
        "usage-field-appeared",
        "usage-field-gone",
        "block-order",
        "sse-events",
    ],
)
def test_semantic_diff(index: int, edit: Any, expected: list[str]) -> None:
    old, new = _with_body(index, edit)
    assert diff_cassettes(old, new) == expected


def test_status_change_is_reported() -> None:
    old = load_cassette(SOURCE / "text-basic.yaml")
    first = old.interactions[0]
    broken = replace(first, response=replace(first.response, status=500))
    lines = diff_cassettes(old, replace(old, interactions=(broken, old.interactions[1])))
    assert lines[0] == "#0 (non-stream): status 200 → 500"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("text-basic", None),
        ("error-400", "interaction #0 answers HTTP 400"),
        ("stream-error-overloaded", "interaction #0 answers HTTP 529"),
    ],
)
def test_fault_reason(name: str, reason: str | None) -> None:
    assert fault_reason(load_cassette(SOURCE / f"{name}.yaml")) == reason


def test_mid_stream_error_is_a_fault() -> None:
    cassette = load_cassette(SOURCE / "stream-error-overloaded.yaml")
    only_stream = replace(cassette, interactions=cassette.interactions[1:])
    assert fault_reason(only_stream) == "interaction #0 ends in a mid-stream `event: error`"


# --- OpenAI and Gemini summaries, pure --------------------------------------------------------


def _edited(name: str, index: int, edit: Any) -> tuple[Any, Any]:
    old = load_cassette(CASSETTES / f"{name}.yaml")
    interactions = list(old.interactions)
    resp = interactions[index].response
    interactions[index] = replace(interactions[index], response=replace(resp, body=edit(resp.body)))
    return old, replace(old, interactions=tuple(interactions))


def _chunks_edit(change: Any) -> Any:
    """Apply `change` to the list of a stream's parsed `data:` payloads (`[DONE]` stays a string)."""

    def edit(body: bytes) -> bytes:
        events = [ev.data or "" for ev in sse.decode(body).events]
        payloads = [json.loads(d) if d != "[DONE]" else d for d in events]
        change(payloads)
        return b"".join(
            b"data: " + (p if isinstance(p, str) else json.dumps(p)).encode() + b"\n\n" for p in payloads
        )

    return edit


def _openai_tool(d: dict[str, Any]) -> None:
    call = {"id": "call_x", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    d["choices"][0]["message"]["tool_calls"] = [call]


@pytest.mark.parametrize(
    ("name", "index", "edit", "expected"),
    [
        ("openai/text-basic", 0, _json_edit(lambda d: d.update(id="chatcmpl-other", created=1)), []),
        ("openai/text-basic", 0, _json_edit(lambda d: d["usage"].update(prompt_tokens=1)), []),
        (
            "openai/text-basic",
            0,
            _json_edit(lambda d: d["choices"][0].update(finish_reason="length")),
            ["#0 (non-stream): finish_reason stop → length"],
        ),
        (
            "openai/text-basic",
            0,
            _json_edit(_openai_tool),
            [
                "#0 (non-stream): message parts [text] → [text, tool_call(get_time)]",
                "#0 (non-stream): message fields appeared: tool_calls",
            ],
        ),
        (
            "openai/text-basic",
            0,
            _json_edit(lambda d: d["usage"].pop("prompt_tokens_details")),
            [
                "#0 (non-stream): usage fields disappeared: prompt_tokens_details, "
                "prompt_tokens_details.audio_tokens, prompt_tokens_details.cached_tokens"
            ],
        ),
        (
            "openai/text-basic",
            1,
            _chunks_edit(lambda ps: ps.pop(-2)),  # the usage-only chunk
            [
                "#1 (stream): chunks [role, text*, finish, usage, [DONE]] → [role, text*, finish, [DONE]]",
                "#1 (stream): usage fields disappeared: completion_tokens, completion_tokens_details, "
                "completion_tokens_details.accepted_prediction_tokens, completion_tokens_details.audio_tokens, "
                "completion_tokens_details.reasoning_tokens, completion_tokens_details.rejected_prediction_tokens, "
                "prompt_tokens, prompt_tokens_details, prompt_tokens_details.audio_tokens, "
                "prompt_tokens_details.cached_tokens, total_tokens",
            ],
        ),
        ("openai/text-basic", 1, _chunks_edit(lambda ps: ps.insert(2, ps[1])), []),  # one more text delta
        (
            "openai/tool-call",
            1,
            _chunks_edit(lambda ps: ps.pop(-1)),  # no [DONE]
            [
                "#1 (stream): chunks [role, tool_calls*, finish, usage, [DONE]] → [role, tool_calls*, finish, usage]"
            ],
        ),
    ],
    ids=[
        "openai-id-ignored",
        "openai-token-count-ignored",
        "openai-finish-reason",
        "openai-tool-call-appeared",
        "openai-usage-details-gone",
        "openai-usage-chunk-gone",
        "openai-delta-count-ignored",
        "openai-done-gone",
    ],
)
def test_openai_semantic_diff(name: str, index: int, edit: Any, expected: list[str]) -> None:
    old, new = _edited(name, index, edit)
    assert diff_cassettes(old, new) == expected


def _gemini_chunks_edit(change: Any) -> Any:
    def edit(body: bytes) -> bytes:
        payloads = [json.loads(ev.data or "") for ev in sse.decode(body).events]
        change(payloads)
        return b"".join(b"data: " + json.dumps(p).encode() + b"\r\n\r\n" for p in payloads)

    return edit


def _gemini_call(d: dict[str, Any]) -> None:
    d["candidates"][0]["content"]["parts"].append({"functionCall": {"name": "get_time", "args": {}}})


@pytest.mark.parametrize(
    ("index", "edit", "expected"),
    [
        (0, _json_edit(lambda d: d.update(responseId="other")), []),
        (0, _json_edit(lambda d: d["usageMetadata"].update(totalTokenCount=1)), []),
        (
            0,
            _json_edit(lambda d: d["candidates"][0].update(finishReason="SAFETY")),
            ["#0 (non-stream): finishReason STOP → SAFETY"],
        ),
        (0, _json_edit(_gemini_call), ["#0 (non-stream): parts [text] → [text, functionCall(get_time)]"]),
        (
            0,
            _json_edit(lambda d: d["usageMetadata"].update(thoughtsTokenCount=12)),
            ["#0 (non-stream): usageMetadata fields appeared: thoughtsTokenCount"],
        ),
        (
            0,
            _json_edit(
                lambda d: d["candidates"][0]["content"]["parts"].insert(0, {"text": "hm", "thought": True})
            ),
            ["#0 (non-stream): parts [text] → [thought, text]"],
        ),
        (
            1,
            _gemini_chunks_edit(lambda ps: ps.insert(1, ps[0])),
            ["#1 (stream): event count 3 → 4"],
        ),
        (
            1,
            _gemini_chunks_edit(lambda ps: ps[-1]["candidates"][0].pop("finishReason")),
            [
                "#1 (stream): finishReason STOP → null",
                "#1 (stream): events [text*, text+finish] → [text*]",
                "#1 (stream): candidate fields disappeared: finishReason",
            ],
        ),
    ],
    ids=[
        "gemini-response-id-ignored",
        "gemini-token-count-ignored",
        "gemini-finish-reason",
        "gemini-function-call-appeared",
        "gemini-usage-field-appeared",
        "gemini-thought-part",
        "gemini-event-count",
        "gemini-no-finish",
    ],
)
def test_gemini_semantic_diff(index: int, edit: Any, expected: list[str]) -> None:
    old, new = _edited("gemini/text-basic", index, edit)
    assert diff_cassettes(old, new) == expected


def test_error_types_are_read_in_each_familys_envelope() -> None:
    old = load_cassette(CASSETTES / "gemini" / "text-basic.yaml")
    first = old.interactions[0]
    error = b'{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}'
    broken = replace(first, response=replace(first.response, status=429, body=error))
    lines = diff_cassettes(old, replace(old, interactions=(broken, old.interactions[1])))
    assert lines[:3] == [
        "#0 (non-stream): status 200 → 429",
        "#0 (non-stream): model gemini-2.5-flash → null",
        "#0 (non-stream): finishReason STOP → null",
    ]
    assert "#0 (non-stream): error type null → RESOURCE_EXHAUSTED" in lines


def _mid_stream(name: str, frame: bytes) -> Any:
    cassette = load_cassette(CASSETTES / f"{name}.yaml")
    stream = cassette.interactions[1]
    body = stream.response.body.split(b"\n\n")[0] + b"\n\n" + frame
    return replace(cassette, interactions=(replace(stream, response=replace(stream.response, body=body)),))


@pytest.mark.parametrize(
    ("name", "frame", "reason"),
    [
        ("openai/text-basic", b'data: {"error": {"message": "boom", "type": "server_error"}}\n\n', "data"),
        ("openai/text-basic", b'event: error\ndata: {"error": {"message": "boom"}}\n\n', "event"),
        ("gemini/text-basic", b'data: {"error": {"code": 503, "status": "UNAVAILABLE"}}\r\n\r\n', "data"),
        (
            "openai/text-basic",
            b'data: {"choices": [], "usage": {"prompt_tokens": 1}}\n\ndata: [DONE]\n\n',
            None,
        ),
    ],
    ids=["openai-data-line", "openai-event-error", "gemini-data-line", "no-error"],
)
def test_each_familys_mid_stream_error_is_a_fault(name: str, frame: bytes, reason: str | None) -> None:
    expected = {
        "data": 'interaction #0 ends in a mid-stream `data: {"error": …}` line',
        "event": "interaction #0 ends in a mid-stream `event: error`",
        None: None,
    }[reason]
    assert fault_reason(_mid_stream(name, frame)) == expected


def test_a_cassettes_dir_that_does_not_exist_yet_is_seeded_like_dot_cassettes(tmp_path: Path) -> None:
    """The README's offline rehearsal (`record … --cassettes-dir /tmp/rehearsal`) works on the first run."""
    import io

    from harness import paths
    from harness.record.command import cassettes_folder

    out = io.StringIO()
    folder = cassettes_folder(tmp_path / "rehearsal", dry_run=False, out=out)
    assert (folder / "anthropic" / "text-basic.yaml").read_bytes() == (
        paths.cassettes_dir() / "anthropic" / "text-basic.yaml"
    ).read_bytes()
    assert "seeded from the suite's set" in out.getvalue()
    dry = cassettes_folder(tmp_path / "not-yet", dry_run=True, out=io.StringIO())
    assert dry == paths.cassettes_dir().resolve() and not (tmp_path / "not-yet").exists()
