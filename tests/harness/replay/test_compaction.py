"""POST /v1/responses/compact as the replay upstream plays it (harness/replay/compaction.py): a gateway passing
compaction through to its Responses provider gets a compacted window made of the case's Responses answer, and the
window sent back as input is taken as api.openai.com takes it."""

from __future__ import annotations

from starlette.testclient import TestClient

from harness import paths
from harness.replay.app import build_app
from harness.replay.compaction import CONTENT_PREFIX, asked, create_path
from harness.replay.state import ReplayState

MARKER = "[gc:responses/compact/window#0123abcd]"
RESPONSES = "/v1/responses"


def _replay(plan: dict) -> TestClient:
    client = TestClient(build_app(ReplayState(paths.cassettes_dir())))
    assert (
        client.post("/__gc/cases", json={"marker": MARKER, "rule": "r", "upstream": plan}).status_code == 201
    )
    return client


def test_the_compaction_endpoint_is_scripted_under_the_create_endpoint() -> None:
    assert asked("/v1/responses/compact") and asked("/openai/v1/responses/compact/")
    assert not asked("/v1/responses") and not asked("/v1/responses/resp_1")
    assert create_path("/v1/responses/compact") == "/v1/responses"


def test_a_passed_through_compaction_is_a_window_that_continues() -> None:
    client = _replay({"cassette": {"responses": "responses/text-basic"}})
    conversation = [
        {"role": "user", "content": f"{MARKER} Remember the word TULIP."},
        {"role": "assistant", "content": "I will remember TULIP."},
    ]
    got = client.post(f"{RESPONSES}/compact", json={"model": "gpt-5.5", "input": conversation})
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["object"] == "response.compaction" and body["id"].startswith("cmp_")
    assert isinstance(body["created_at"], int)
    assert isinstance(body["usage"]["input_tokens_details"]["cached_tokens"], int)
    *users, item = body["output"]
    assert [u["role"] for u in users] == ["user"]
    assert users[0]["content"] == [{"type": "input_text", "text": f"{MARKER} Remember the word TULIP."}]
    assert item["type"] == "compaction" and item["encrypted_content"].startswith(CONTENT_PREFIX)
    assert len(item["encrypted_content"]) > len(CONTENT_PREFIX)  # the answer's text, readable
    again = client.post(RESPONSES, json={"model": "gpt-5.5", "input": [*body["output"], {"role": "user", "content": "Which word?"}]})  # fmt: skip
    assert again.status_code == 200 and again.json()["object"] == "response"
    calls = client.get("/__gc/calls", params={"marker": MARKER}).json()["calls"]
    assert [(c["path"], c["served"]["status"]) for c in calls] == [
        (f"{RESPONSES}/compact", 200),
        (RESPONSES, 200),
    ]


def test_a_scripted_fault_reaches_the_compaction_as_it_is() -> None:
    client = _replay({"cassette": {"responses": "responses/text-basic"}, "fault": {"status": 500}})
    got = client.post(f"{RESPONSES}/compact", json={"model": "gpt-5.5", "input": f"{MARKER} Hi."})
    assert got.status_code == 500 and "error" in got.json()


def test_a_compaction_without_model_is_refused_as_openai_refuses_it() -> None:
    client = _replay({"cassette": {"responses": "responses/text-basic"}})
    got = client.post(f"{RESPONSES}/compact", json={"input": f"{MARKER} Hi."})
    assert got.status_code == 400 and got.json()["error"]["param"] == "model"
