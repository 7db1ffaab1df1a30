"""harness.cassette.document: loading with provenance, refusing secrets, scrubbing, writing, matching."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import vcr.cassette
import yaml
from vcr.serialize import deserialize
from vcr.serializers import yamlserializer

from harness.cassette.bodies import stream_flag
from harness.cassette.document import (
    Cassette,
    Interaction,
    Provenance,
    RecordedRequest,
    RecordedResponse,
    cassette_from_dict,
    find_secrets,
    load_cassette,
    load_named,
    scrub,
    scrub_uri,
    write_cassette,
)
from harness.cassette.matching import match
from harness.errors import CassetteError
from harness.families import endpoint_kind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "cassettes"
# Built by concatenation so that no secret-shaped literal sits in the repository.
FAKE_ANT_KEY = "sk-" + "ant-" + "api03-" + "Zx9" * 12
FAKE_OPENAI_KEY = "sk-" + "proj" + "Ab1" * 10
FAKE_TOKEN = "eyJ" + "hbGciOiJIUzI1NiJ9" * 3


def _raw(**meta_overrides: object) -> dict:
    data = yaml.load(
        (FIXTURES / "anthropic" / "text.yaml").read_text(), Loader=yamlserializer._CassetteLoader
    )
    data["metadata"].update(meta_overrides)
    return data


def _write(tmp_path: Path, data: object) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(yaml.dump(data, allow_unicode=True))
    return p


@pytest.mark.parametrize(
    ("name", "provider", "n", "sse"),
    [
        ("anthropic/text", "anthropic", 2, [False, True]),
        ("anthropic/tool-use", "anthropic", 2, [False, True]),
        ("anthropic/overloaded", "anthropic", 2, [False, False]),
        ("anthropic/retry-then-text", "anthropic", 2, [False, False]),
        ("openai/chat", "openai", 2, [False, True]),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_fixture_loads_with_provenance(name: str, provider: str, n: int, sse: list[bool]) -> None:
    c = load_named(name, FIXTURES)
    assert c.name == name
    assert c.metadata.origin == "synthesized"
    assert c.metadata.provider == provider
    assert c.metadata.date == "2026-11-29"
    assert len(c.interactions) == n
    assert [i.response.is_sse for i in c.interactions] == sse
    # Bodies are exactly what vcrpy's own deserializer yields.
    _, responses, *_ = deserialize((FIXTURES / f"{name}.yaml").read_text(), yamlserializer)
    assert [r["body"]["string"] for r in responses] == [i.response.body for i in c.interactions]
    for it in c.interactions:
        assert it.request.json is not None
        assert all(k == k.lower() for k in it.response.headers)


def _set(path: str, value: object):
    def edit(d: dict) -> None:
        *parents, last = path.split(".")
        node = d
        for p in parents:
            node = node[int(p)] if p.isdigit() else node[p]
        if value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return edit


_DELETE = object()


def _recorded_host(host: object):
    def edit(d: dict) -> None:
        d["metadata"].update(origin="recorded", host=host)

    return edit


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (_set("version", 2), "unsupported cassette version 2"),
        (_set("version", _DELETE), "unsupported cassette version None"),
        (_set("metadata", _DELETE), "missing provenance"),
        (_set("metadata.origin", "invented"), "metadata.origin must be"),
        (_set("metadata.date", _DELETE), "lacks metadata: date"),
        (_set("metadata.provider", ""), "lacks metadata: provider"),
        (_set("metadata.date", "29/11/2026"), "YYYY-MM-DD"),
        (_set("metadata.flavour", "x"), "unknown metadata keys: flavour"),
        (_set("interactions", []), "non-empty list"),
        (_set("interactions.0.response.status", 200), "response.status"),
        (_set("interactions.0.request.uri", _DELETE), "request.uri is missing"),
        (
            _set("interactions.0.request.headers.authorization", [f"Bearer {FAKE_ANT_KEY}"]),
            "request header 'authorization'",
        ),
        (_set("interactions.0.request.headers.x-api-key", ["abc123"]), "request header 'x-api-key'"),
        (
            _set("interactions.1.request.headers.x-goog-api-key", ["AIza" + "q" * 35]),
            "header 'x-goog-api-key'",
        ),
        (_set("interactions.0.response.headers.x-debug", [FAKE_OPENAI_KEY]), "response header 'x-debug'"),
        (
            _set("interactions.1.response.headers.set-cookie", ["session=abcdef"]),
            "response header 'set-cookie'",
        ),
        (
            _set("interactions.0.request.headers.x-forwarded", [f"Bearer {FAKE_TOKEN}"]),
            "header 'x-forwarded'",
        ),
        (_set("metadata.host", "127.0.0.1:8080"), "a synthesized cassette has none"),
        (_recorded_host("https://api.example.com"), "metadata.host must be host or host:port"),
        (_recorded_host("api.example.com/v1"), "metadata.host must be host or host:port"),
        (_recorded_host(8080), "metadata.host must be a string"),
        (
            _set("interactions.1.request.uri", "https://h/v1/messages?alt=sse&key=" + "AIza" + "q" * 35),
            "interactions[1].request.uri carries a credential",
        ),
        (
            _set("interactions.0.request.uri", "https://h/v1/messages?api_key=abc123"),
            "uri carries a credential",
        ),
        (_set("interactions.0.request.uri", "https://h/v1/messages?x=" + "AIza" + "q" * 35), "uri carries"),
    ],
    ids=[
        "version-2",
        "version-missing",
        "no-metadata",
        "bad-origin",
        "no-date",
        "empty-provider",
        "bad-date",
        "unknown-meta-key",
        "no-interactions",
        "bad-status",
        "no-uri",
        "anthropic-key-in-authorization",
        "short-x-api-key",
        "google-key",
        "openai-key-in-response-header",
        "cookie",
        "bearer-token-any-header",
        "host-on-synthesized",
        "host-with-scheme",
        "host-with-path",
        "host-not-a-string",
        "key-in-query",
        "short-key-in-query",
        "google-key-in-other-query",
    ],
)
def test_invalid_cassettes_are_refused(tmp_path: Path, edit, problem: str) -> None:
    data = _raw()
    edit(data)
    path = _write(tmp_path, data)
    with pytest.raises(CassetteError) as info:
        load_cassette(path)
    assert problem in info.value.problem
    assert info.value.file == str(path)
    assert "sk-" not in str(info.value)  # the error names the header, never the value


@pytest.mark.parametrize(
    ("origin", "drop", "ok"),
    [
        ("recorded", "api_version", False),
        ("recorded", "model", False),
        ("recorded", "description", True),
        ("synthesized", "api_version", True),
        ("synthesized", "model", True),
    ],
    ids=[
        "recorded-needs-api-version",
        "recorded-needs-model",
        "description-optional",
        "synth-api-version",
        "synth-model",
    ],
)
def test_provenance_requirements_depend_on_origin(tmp_path: Path, origin: str, drop: str, ok: bool) -> None:
    data = _raw(origin=origin)
    del data["metadata"][drop]
    path = _write(tmp_path, data)
    if ok:
        assert load_cassette(path).metadata.origin == origin
    else:
        with pytest.raises(CassetteError, match=drop):
            load_cassette(path)


@pytest.mark.parametrize("host", ["127.0.0.1:8080", "eu.api.example.com", "[::1]:9", "localhost"])
def test_a_recorded_cassette_may_name_its_host(tmp_path: Path, host: str) -> None:
    data = _raw(origin="recorded", host=host)
    path = _write(tmp_path, data)
    loaded = load_cassette(path)
    assert loaded.metadata.host == host
    again = load_cassette(write_cassette(tmp_path / "again.yaml", loaded))
    assert again.metadata == loaded.metadata and again.metadata.to_dict()["host"] == host


def test_a_placeholder_key_in_the_query_loads() -> None:
    data = _raw()
    data["interactions"][0]["request"]["uri"] = (
        "https://h/v1beta/models/m:generateContent?key=<GEMINI_API_KEY>"
    )
    assert (
        cassette_from_dict(data, path=Path("c.yaml"), name="c")
        .interactions[0]
        .request.path.endswith(":generateContent")
    )


@pytest.mark.parametrize(
    ("uri", "clean"),
    [
        ("https://h/v1/messages", "https://h/v1/messages"),
        ("https://h/m:streamGenerateContent?alt=sse", "https://h/m:streamGenerateContent?alt=sse"),
        ("https://h/m:streamGenerateContent?alt=sse&key=abc123", "https://h/m:streamGenerateContent?alt=sse"),
        ("https://h/m:generateContent?KEY=abc&Api_Key=d&x=1", "https://h/m:generateContent?x=1"),
        ("https://h/m:generateContent?access_token=t", "https://h/m:generateContent"),
    ],
    ids=["no-query", "kept-query", "key-dropped", "case-insensitive", "token-dropped"],
)
def test_scrub_uri_drops_credential_query_parameters(uri: str, clean: str) -> None:
    assert scrub_uri(uri) == clean
    original = _interaction_with_secrets()
    moved = replace(original, request=replace(original.request, uri=uri))
    assert scrub(moved).request.uri == clean


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette"):
        load_named("anthropic/nope", FIXTURES)
    with pytest.raises(CassetteError, match="leaves"):
        load_named("../fixtures/cassettes/anthropic/text", FIXTURES / "anthropic")
    bad = tmp_path / "bad.yaml"
    bad.write_text("interactions: [\n")
    with pytest.raises(CassetteError, match="not valid cassette YAML"):
        load_cassette(bad)
    evil = tmp_path / "evil.yaml"
    evil.write_text("!!python/object/apply:os.system ['true']\n")
    with pytest.raises(CassetteError):
        load_cassette(evil)


def test_unquoted_yaml_date_is_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, _raw())
    path.write_text(path.read_text().replace("date: '2026-11-29'", "date: 2026-11-29"))
    assert load_cassette(path).metadata.date == "2026-11-29"


@pytest.mark.parametrize(
    ("headers", "found"),
    [
        ({"authorization": ["Bearer <REDACTED>"]}, []),
        ({"authorization": ["<REDACTED>"]}, []),
        ({"x-api-key": ["REDACTED"]}, []),
        ({"x-api-key": ["<ANTHROPIC_API_KEY>"]}, []),
        ({"authorization": ["Bearer {OPENAI_KEY}"]}, []),
        ({"user-agent": ["UA"], "request-id": ["req_011CabcdefghijklmnopQRST"]}, []),
        ({"authorization": [f"Bearer {FAKE_ANT_KEY}"]}, ["authorization"]),
        ({"x-api-key": ["test-key"]}, ["x-api-key"]),
        ({"Authorization": ["Basic dXNlcjpwYXNz"]}, ["authorization"]),
        ({"x-note": [FAKE_ANT_KEY[:20]]}, ["x-note"]),
        ({"x-note": ["sk-short"]}, []),
    ],
    ids=[
        "bearer-placeholder",
        "bare-placeholder",
        "redacted-word",
        "named-placeholder",
        "braces-placeholder",
        "harmless",
        "anthropic-key",
        "non-placeholder-api-key",
        "basic-auth",
        "ant-prefix-anywhere",
        "short-sk-is-fine",
    ],
)
def test_find_secrets(headers: dict, found: list[str]) -> None:
    assert find_secrets(headers) == found


def _interaction_with_secrets() -> Interaction:
    body = f'{{"note":"{FAKE_ANT_KEY}","stream":false}}'.encode()
    return Interaction(
        request=RecordedRequest(
            method="POST",
            uri="https://api.anthropic.com/v1/messages",
            path="/v1/messages",
            headers={
                "authorization": (f"Bearer {FAKE_ANT_KEY}",),
                "x-api-key": (FAKE_ANT_KEY,),
                "content-type": ("application/json",),
            },
            body=body,
            json=None,
        ),
        response=RecordedResponse(
            status=200,
            message="OK",
            headers={
                "content-type": ("application/json",),
                "set-cookie": ("__cf_bm=abc; path=/",),
                "anthropic-organization-id": ("org-123",),
                "request-id": ("req_1",),
            },
            body=b'{"ok":true}',
        ),
    )


def test_scrub_removes_credentials_and_account_headers() -> None:
    original = _interaction_with_secrets()
    clean = scrub(original)
    assert clean.request.headers["authorization"] == ("Bearer <REDACTED>",)
    assert clean.request.headers["x-api-key"] == ("<REDACTED>",)
    assert "set-cookie" not in clean.response.headers
    assert "anthropic-organization-id" not in clean.response.headers
    assert clean.response.headers["request-id"] == ("req_1",)
    assert FAKE_ANT_KEY.encode() not in clean.request.body
    assert clean.request.json == {"note": "<REDACTED>", "stream": False}
    assert find_secrets(clean.request.headers) == [] and find_secrets(clean.response.headers) == []
    assert original.request.headers["x-api-key"] == (FAKE_ANT_KEY,)  # the input is untouched


def test_write_round_trips_and_vcrpy_reads_it(tmp_path: Path) -> None:
    original = load_named("anthropic/tool-use", FIXTURES)
    binary = replace(
        original.interactions[0],
        response=replace(original.interactions[0].response, body=b"\x1f\x8b\xff\x00"),
    )
    cassette = replace(original, interactions=(*original.interactions, binary))
    out = write_cassette(tmp_path / "sub" / "copy.yaml", cassette)
    again = load_cassette(out, name=original.name)
    assert again.metadata == original.metadata
    assert [i.response.body for i in again.interactions] == [i.response.body for i in cassette.interactions]
    assert [i.request.body for i in again.interactions] == [i.request.body for i in cassette.interactions]
    text = out.read_text()
    assert "!!binary" in text  # non-UTF-8 bodies stay bytes, as vcrpy writes them
    assert "\n        event: message_start\n" in text  # SSE readable as a literal block
    vc = vcr.cassette.Cassette.load(path=str(out))  # vcrpy's own loader (no patching) accepts it
    assert len(vc.requests) == 3


def test_write_refuses_secrets(tmp_path: Path) -> None:
    cassette = Cassette(
        name="x",
        path=tmp_path / "x.yaml",
        metadata=Provenance(origin="synthesized", date="2026-11-29", provider="anthropic"),
        interactions=(_interaction_with_secrets(),),
    )
    with pytest.raises(CassetteError, match="authorization"):
        write_cassette(cassette.path, cassette)
    assert not cassette.path.exists()
    write_cassette(
        cassette.path, replace(cassette, interactions=tuple(scrub(i) for i in cassette.interactions))
    )
    assert load_cassette(cassette.path).interactions[0].request.headers["x-api-key"] == ("<REDACTED>",)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/v1/messages", "anthropic.messages"),
        ("/proxy/anthropic/v1/messages", "anthropic.messages"),
        ("/messages?beta=true", "anthropic.messages"),
        ("/v1/chat/completions", "openai.chat"),
        ("/openai/v1/chat/completions/", "openai.chat"),
        ("/v1/models", None),
        ("/v1/messages/count_tokens", "anthropic.count_tokens"),
    ],
    ids=["messages", "prefixed", "query", "chat", "trailing-slash", "models", "count-tokens"],
)
def test_endpoint_kind(path: str, kind: str | None) -> None:
    assert endpoint_kind(path) == kind


@pytest.mark.parametrize(
    ("body", "flag"),
    [
        ({"stream": True}, True),
        ({"stream": False}, False),
        ({}, False),
        ({"stream": "true"}, False),
        (None, False),
    ],
    ids=["true", "false", "absent", "string", "no-body"],
)
def test_stream_flag(body: object, flag: bool) -> None:
    assert stream_flag(body) is flag


@pytest.mark.parametrize(
    ("name", "method", "path", "body", "candidates", "closest_failed"),
    [
        ("anthropic/text", "POST", "/v1/messages", {"model": "m"}, (0,), None),
        ("anthropic/text", "POST", "/gw/v1/messages", {"stream": True}, (1,), None),
        ("anthropic/retry-then-text", "POST", "/v1/messages", {}, (0, 1), None),
        ("openai/chat", "POST", "/v1/chat/completions", {"stream": True}, (1,), None),
        ("anthropic/text", "POST", "/v1/chat/completions", {"stream": True}, (), ("endpoint",)),
        ("anthropic/text", "GET", "/v1/messages", {}, (), ("method",)),
        ("anthropic/overloaded", "POST", "/v1/messages", {"stream": "yes"}, (0,), None),
        ("openai/chat", "POST", "/v1/messages", {"stream": True}, (), ("endpoint",)),
    ],
    ids=[
        "json",
        "stream-prefixed",
        "two-candidates",
        "openai-stream",
        "wrong-endpoint",
        "wrong-method",
        "odd-stream",
        "openai-vs-messages",
    ],
)
def test_match(name, method, path, body, candidates, closest_failed) -> None:
    result = match(load_named(name, FIXTURES), method, path, body)
    assert result.candidates == candidates
    if closest_failed is None:
        assert result.ok and result.closest == ()
    else:
        assert not result.ok
        assert result.closest[0].failed == closest_failed  # the closest differ only in that matcher
        assert "closest: #" in result.describe()


def test_match_diagnosis_orders_by_fewest_failures() -> None:
    result = match(load_named("openai/chat", FIXTURES), "POST", "/v1/messages", {"stream": False})
    assert [(m.interaction, m.failed) for m in result.closest] == [
        (0, ("endpoint",)),
        (1, ("endpoint", "stream")),
    ]
    assert "stream false != true" in result.describe()
