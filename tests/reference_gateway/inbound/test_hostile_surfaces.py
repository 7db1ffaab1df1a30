"""Hostile input on every inbound surface (issue 47, 2): the chat path's intake limits — nesting, numbers a float
holds, Unicode text — hold on `/v1/messages` (passed through and bridged) and `/v1/responses` too, each refused
with a 400 in the surface's own envelope before any upstream call; and Relay's Responses bridge keeps Anthropic's
sampling fields in range as its chat path does."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reference_gateway.app import GatewaySettings, Hooks, create_app
from reference_gateway.auth import KeyRing
from reference_gateway.policy.models import load_catalog
from reference_gateway.policy.profiles import EZAT, LYROUTER, RELAY
from reference_gateway.policy.vocabulary import Profile
from reference_gateway.upstream.client import UpstreamSettings
from tests.reference_gateway.conftest import CLIENT_KEY, FakeFamilies, ServerThread

HOLE = "__hole__"
NESTED_970 = "[" * 970 + "]" * 970
HOSTILE = {
    "970 nested arrays": NESTED_970,
    "deep objects": '{"a":' * 300 + "1" + "}" * 300,
    "NaN": "NaN",
    "an infinite number": "1e999",
    "a lone surrogate": '"\\ud800"',
}


def settings(profile: Profile, upstream: str, state: Path) -> GatewaySettings:
    return GatewaySettings(
        profile=profile,
        catalog=load_catalog(shipped=profile.catalog),
        upstream=UpstreamSettings(base_url=upstream, api_key="sk-upstream", request_timeout=5.0),
        keys=KeyRing.of([CLIENT_KEY]),
        state_url=f"sqlite:///{state}",
    )


@contextlib.contextmanager
def gateway(profile: Profile, upstream: str, state: Path) -> Iterator[httpx.Client]:
    with ServerThread(create_app(settings(profile, upstream, state), Hooks())) as server:
        base = server.url + profile.base_paths[0]
        headers = {"authorization": f"Bearer {CLIENT_KEY}", "content-type": "application/json"}
        with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
            yield client


# (profile, path, model, the body with a hole where the hostile value goes, how its error envelope is read)
SURFACES = [
    ("ezat", "/messages", "anthropic/claude-sonnet-5-5", "messages-passed-through"),
    ("lyrouter", "/messages", "gpt-5.5", "messages-bridged"),
    ("relay", "/messages", "gemini-flash", "messages-bridged"),
    ("ezat", "/responses", "anthropic/claude-sonnet-5-5", "responses"),
    ("relay", "/responses", "claude-sonnet", "responses"),
]
PROFILES = {"ezat": EZAT, "lyrouter": LYROUTER, "relay": RELAY}


def _body(path: str, model: str) -> bytes:
    if path == "/messages":
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": 16,
            "messages": [{"role": "user", "content": HOLE}],
        }
    else:
        body = {"model": model, "input": [{"role": "user", "content": HOLE}]}
    return json.dumps(body).encode()


@pytest.mark.parametrize(
    ("profile", "path", "model", "surface"), SURFACES, ids=[s[3] + "-" + s[0] for s in SURFACES]
)
@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_the_intake_limits_hold_on_every_surface(
    profile: str, path: str, model: str, surface: str, hostile: str, families: FakeFamilies, families_server: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    raw = _body(path, model).replace(json.dumps(HOLE).encode(), HOSTILE[hostile].encode())
    with gateway(PROFILES[profile], families_server[1].url, tmp_path / "s.db") as client:
        answer = client.post(path, content=raw)
    assert answer.status_code == 400, answer.text
    document = answer.json()
    if path == "/messages":
        assert document["type"] == "error"
        assert document["error"]["type"] == "invalid_request_error"
    else:
        assert document["error"]["type"] == "invalid_request_error"
    assert families.calls == []  # refused before any upstream call


def test_relays_responses_bridge_keeps_anthropics_temperature_in_range(
    families: FakeFamilies, families_server: Any, tmp_path: Path
) -> None:
    with gateway(RELAY, families_server[1].url, tmp_path / "s.db") as client:
        chat = client.post(
            "/chat/completions",
            json={
                "model": "claude-sonnet",
                "temperature": 1.5,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        responses = client.post(
            "/responses", json={"model": "claude-sonnet", "temperature": 1.5, "input": "hi"}
        )
    assert (chat.status_code, responses.status_code) == (200, 200), responses.text
    sent = [json.loads(call.raw) for call in families.calls]
    assert [body.get("temperature") for body in sent] == [1, 1]  # Anthropic takes [0, 1]


@pytest.mark.parametrize(
    ("profile", "path", "body", "message"),
    [
        ("lyrouter", "/messages", {"model": "gpt-5.5", "max_tokens": 64, "messages": 0.5},
         "messages: Input should be a valid list"),
        ("relay", "/messages", {"model": "gemini-flash", "max_tokens": True, "messages": []},
         "max_tokens: Input should be a valid integer"),
        ("relay", "/messages", {"model": "gemini-flash", "max_tokens": 8, "messages": [{"role": "tool", "content": "x"}]},
         "messages.0.role: Input should be 'user' or 'assistant'"),
        ("ezat", "/responses", {"model": "anthropic/claude-sonnet-5-5", "input": "hi", "tools": True},
         "Invalid type for 'tools': expected an array of tools."),
    ],
    ids=["messages-not-a-list", "max-tokens-a-boolean", "a-tool-role", "responses-tools-not-a-list"],
)  # fmt: skip
def test_a_body_of_the_wrong_shape_is_the_surfaces_400_not_a_500(
    profile: str, path: str, body: dict[str, Any], message: str, families: FakeFamilies, families_server: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    """What the fuzz found on the bridges (issue 47): a field of the wrong type was a 500 (the bridge iterated a
    number); now the surface's 400, in its own words, before any upstream call."""
    with gateway(PROFILES[profile], families_server[1].url, tmp_path / "s.db") as client:
        answer = client.post(path, json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["message"] == message
    assert families.calls == []
