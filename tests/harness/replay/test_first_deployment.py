"""A fault marked `first_deployment_only` answers only the case's first deployment (its endpoint path and model,
retries included); a fallback to another deployment is served from the cassette (gateway features, "Fallback")."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from harness.paths import cassettes_dir
from harness.replay.app import deployment_of
from harness.replay.client import ReplayClient
from harness.replay.server import ReplayServer

CASSETTE = {"anthropic": "anthropic/text-basic", "openai": "openai/text-basic"}


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer(cassettes_dir()) as srv:
        yield srv


def _post(server: ReplayServer, path: str, model: str, marker: str) -> httpx.Response:
    body = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": f"{marker} hi"}]}
    return httpx.post(server.url + path, json=body, headers={"anthropic-version": "2023-06-01"}, timeout=5)


def test_deployment_is_path_and_model() -> None:
    assert deployment_of("/v1/messages", {"model": "a"}) == "/v1/messages|a"
    assert deployment_of("/v1beta/models/g:generateContent", None) == "/v1beta/models/g:generateContent|"


@pytest.mark.parametrize("fault", [{"status": 529}, {"drop_after_bytes": 0}], ids=["status", "drop"])
def test_only_the_first_deployment_fails(server: ReplayServer, fault: dict[str, object]) -> None:
    marker = f"[gc:test/deployments#{uuid.uuid4().hex[:8]}]"
    with ReplayClient(server.url, timeout=5) as rc:
        rc.register(
            marker,
            "test/deployments",
            {"cassette": CASSETTE, "fault": {**fault, "first_deployment_only": True}},
        )
        first = "/v1/messages"
        for _ in range(2):  # the deployment and a retry of it fail alike
            try:
                failed = _post(server, first, "claude-primary", marker)
                assert failed.status_code == 529 or not failed.content
            except httpx.HTTPError:
                pass  # the drop: the body was cut
        assert _post(server, first, "claude-fallback", marker).status_code == 200  # another model
        assert (
            _post(server, "/backup/v1/messages", "claude-primary", marker).status_code == 200
        )  # another path
        calls = rc.calls(marker)
    assert [c.served.fault is not None for c in calls if c.served] == [True, True, False, False]


def test_without_the_flag_every_call_fails(server: ReplayServer) -> None:
    marker = f"[gc:test/deployments#{uuid.uuid4().hex[:8]}]"
    with ReplayClient(server.url, timeout=5) as rc:
        rc.register(marker, "test/deployments", {"cassette": CASSETTE, "fault": {"status": 503}})
        assert _post(server, "/v1/messages", "claude-fallback", marker).status_code == 503
        assert _post(server, "/v1/messages", "other", marker).status_code == 503
