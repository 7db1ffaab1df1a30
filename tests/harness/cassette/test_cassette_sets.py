"""Cassette sets (one cassette per provider family) and family-keyed upstream assertions (profile openai)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from harness.checks.upstream import check_upstream
from harness.errors import ReplayConfigError
from harness.exchange import Exchange, ReceivedResponse, SentRequest, UpstreamCall
from harness.families import endpoint_family
from harness.paths import cassettes_dir
from harness.replay.client import ReplayClient
from harness.replay.server import ReplayServer
from harness.replay.state import ReplayState

SET = {"anthropic": "anthropic/text-basic", "openai": "openai/text-basic", "gemini": "gemini/text-basic"}


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer(cassettes_dir()) as srv:
        yield srv


def test_endpoint_family() -> None:
    assert endpoint_family("/v1/messages") == "anthropic"
    assert endpoint_family("/v1/chat/completions") == "openai"
    assert endpoint_family("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse") == "gemini"
    assert endpoint_family("/v1/embeddings") is None


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/v1/messages", {"model": "m", "max_tokens": 64, "messages": []}, '"type":"message"'),
        ("/v1/chat/completions", {"model": "m", "messages": []}, '"object":"chat.completion"'),
        ("/v1beta/models/gemini-2.5-flash:generateContent", {"contents": []}, '"candidates"'),
    ],
    ids=["anthropic", "openai", "gemini"],
)
def test_each_family_is_answered_from_its_own_cassette(
    server: ReplayServer, path: str, body: dict[str, object], needle: str
) -> None:
    marker = "[gc:test/sets#a1b2c3]"
    with ReplayClient(server.url, timeout=5) as rc:
        rc.register(marker, "test/sets", {"cassette": SET})
        key = "messages" if "contents" not in body else "contents"
        part = (
            {"role": "user", "content": f"{marker} hi"}
            if key == "messages"
            else {"parts": [{"text": marker}]}
        )
        sent = {**body, key: [part]}
        got = httpx.post(server.url + path, json=sent, timeout=5, trust_env=False)
        assert got.status_code == 200, got.text
        assert needle in got.text.replace(" ", "")
        served = rc.calls(marker)[0].served
        assert served is not None and served.cassette == SET[endpoint_family(path) or ""]


def test_a_family_the_set_does_not_name_gets_a_scripted_400(server: ReplayServer) -> None:
    marker = "[gc:test/sets#d4e5f6]"
    with ReplayClient(server.url, timeout=5) as rc:
        rc.register(marker, "test/sets", {"cassette": {"anthropic": "anthropic/text-basic"}})
        body = {"model": "m", "messages": [{"role": "user", "content": f"{marker} hi"}]}
        got = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=5, trust_env=False)
    assert got.status_code == 400
    assert "for the openai family" in got.json()["error"]["message"]


@pytest.mark.parametrize(
    "upstream",
    [{"cassette": {"azure": "openai/text-basic"}}, {"cassette": {}}, {"cassette": 7}],
    ids=["unknown-family", "empty", "not-a-name"],
)
def test_a_bad_set_is_refused(upstream: dict[str, object]) -> None:
    with pytest.raises(ReplayConfigError):
        ReplayState(cassettes_dir()).register("[gc:test/sets#0a0b0c]", "test/sets", upstream)


def _exchange(path: str, body: dict[str, object]) -> Exchange:
    call = UpstreamCall("POST", path, {}, json.dumps(body).encode(), body)
    return Exchange(
        rule_id="openai/test",
        variant={"stream": False},
        request=SentRequest("POST", "http://gw/v1/chat/completions", {}, b"{}"),
        response=ReceivedResponse(200, {}, b"{}"),
        upstream=(call,),
        marker="[gc:openai/test]",
        models={},
    )


def test_family_keyed_assertions_judge_only_their_family() -> None:
    assertions = [
        {"family": "anthropic", "path": "$.max_tokens", "equals": 77},
        {"family": "gemini", "path": "$.generationConfig.maxOutputTokens", "equals": 77},
    ]
    assert list(check_upstream(assertions, _exchange("/v1/messages", {"max_tokens": 77}))) == []
    gemini = _exchange("/v1beta/models/g:generateContent", {"generationConfig": {"maxOutputTokens": 77}})
    assert list(check_upstream(assertions, gemini)) == []
    wrong = list(check_upstream(assertions, _exchange("/v1/messages", {"max_tokens": 4096})))
    assert len(wrong) == 1 and wrong[0].path.endswith("max_tokens")
