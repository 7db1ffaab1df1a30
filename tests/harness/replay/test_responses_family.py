"""OpenAI's Responses API as a provider family (issue 32): the replay refuses what api.openai.com refuses on
/v1/responses, answers a request's own parameters and ids, keeps only what OpenAI keeps; the answer reader reads
its cassettes; `mutants --reference-gateway` names a gateway that serves the catalog."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from harness import paths
from harness.cassette.document import load_cassette
from harness.checks.answer import summarize
from harness.exchange import ServedAnswer
from harness.families import endpoint_family, endpoint_kind
from harness.replay.app import _fresh_response_id, _keep_response, _unkept_previous, build_app
from harness.replay.plan import as_asked, cassette_answer
from harness.replay.state import Case, ReplayState
from harness.replay.validate import refusal


def _cassette(name: str):  # type: ignore[no-untyped-def]
    return load_cassette(paths.cassettes_dir() / f"{name}.yaml", name=name)


def test_the_responses_endpoint_is_its_own_family() -> None:
    assert endpoint_kind("/v1/responses") == "openai.responses"
    assert endpoint_family("/v1/responses") == "responses"
    assert endpoint_family("/v1/chat/completions") == "openai"


@pytest.mark.parametrize(
    ("body", "param", "code"),
    [
        ({"model": "gpt-5.5", "input": "hi", "max_tokens": 64}, "max_tokens", "unknown_parameter"),
        (
            {"model": "gpt-5.5", "messages": [{"role": "user", "content": "hi"}]},
            "messages",
            "unknown_parameter",
        ),
        (
            {"model": "gpt-5.5", "input": "hi", "max_output_tokens": 8},
            "max_output_tokens",
            "integer_below_min_value",
        ),
        ({"model": "gpt-5.5", "input": "hi", "temperature": 0.2}, "temperature", "unsupported_parameter"),
        ({"input": "hi"}, "model", "missing_required_parameter"),
    ],
)
def test_the_replay_refuses_what_openai_refuses_on_responses(body: dict, param: str, code: str) -> None:
    problem = refusal("openai.responses", body)
    assert problem is not None and (problem.param, problem.code) == (param, code)  # type: ignore[attr-defined]


def test_what_openai_takes_is_not_refused() -> None:
    body = {"model": "gpt-4.1", "input": "hi", "temperature": 0.2, "max_output_tokens": 16, "store": False,
            "client_metadata": {"originator": "codex_exec"}}  # fmt: skip
    assert refusal("openai.responses", body) is None


USER = {"role": "user", "content": "Which word?"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}


@pytest.mark.parametrize(
    ("items", "refused"),
    [
        ([], "Invalid 'input': empty array"),
        ([USER, CALL], "No tool output found for function call call_1."),
        ([USER, OUTPUT], "No tool call found for function call output with call_id call_1."),
        ([USER, {"type": "reasoning", "id": "rs_1", "summary": []}], "Item 'rs_1' of type 'reasoning' was provided"),
        ([USER, {"type": "reasoning", "id": "rs_1", "summary": []}, USER], "without its required following item"),
        ([USER, {"type": "reasoning", "id": "rs_1", "summary": []}, {"role": "assistant", "content": "TULIP."}, USER],
         None),
        ([USER, {"type": "reasoning", "id": "rs_1", "summary": []}, CALL, OUTPUT], None),
    ],
    ids=["empty", "call-alone", "output-alone", "reasoning-last", "reasoning-then-user", "reasoning-then-message",
         "reasoning-then-call"],
)  # fmt: skip
def test_a_history_openai_refuses_is_refused_as_it_refuses_it(items: list, refused: str | None) -> None:
    """Audit D9: what a gateway reshaping a history breaks is met as OpenAI meets it, and nothing it takes."""
    problem = refusal("openai.responses", {"model": "gpt-5.5", "input": items})
    if refused is None:
        assert problem is None
    else:
        assert problem is not None and refused in problem


@pytest.mark.parametrize("index", [0, 1], ids=["json", "stream"])
def test_a_served_response_repeats_the_requests_parameters_under_an_id_of_its_own(index: int) -> None:
    answer = cassette_answer(_cassette("responses/text-basic"), index)
    asked = {"model": "gpt-5.5", "input": "hi", "store": False, "temperature": 0.5, "metadata": {"k": "v"}}
    served = as_asked(answer, "openai.responses", asked)
    text = served.body.decode()
    assert '"store":false' in text and '"temperature":0.5' in text and '"metadata":{"k":"v"}' in text
    assert '"store":true' not in text
    first, second = (_fresh_response_id("openai.responses", served) for _ in range(2))
    ids = {
        json.loads(a.body)["id"] if index == 0 else a.body.split(b'"id":"', 1)[1].split(b'"', 1)[0].decode()
        for a in (first, second)
    }
    assert len(ids) == 2 and all(i.startswith("resp_") for i in ids)


def test_only_a_kept_response_can_be_continued() -> None:
    state = ReplayState(paths.cassettes_dir())
    case = Case(marker="m", rule="r", upstream={}, cassette=None)
    answer = _fresh_response_id("openai.responses", cassette_answer(_cassette("responses/text-basic"), 0))
    kept_id = json.loads(answer.body)["id"]
    _keep_response(
        state, case, "openai.responses", {"model": "gpt-5.5", "input": "hi", "store": False}, answer
    )
    assert _unkept_previous(case, "openai.responses", {"previous_response_id": kept_id}) == kept_id
    assert state.issuing_case(kept_id) is case and state.kept_case(kept_id) is None
    _keep_response(state, case, "openai.responses", {"model": "gpt-5.5", "input": "hi"}, answer)
    assert _unkept_previous(case, "openai.responses", {"previous_response_id": kept_id}) is None
    assert state.kept_case(kept_id) is case
    assert _unkept_previous(case, "openai.chat", {"previous_response_id": "resp_x"}) is None


@pytest.mark.parametrize("index", [0, 1], ids=["json", "stream"])
def test_the_answer_reader_reads_a_responses_answer(index: int) -> None:
    it = _cassette("responses/tool-call-parallel").interactions[index]
    headers = {k: v[0] for k, v in it.response.headers.items()}
    answer = summarize(ServedAnswer(it.response.status, headers, it.response.body))
    assert answer is not None and answer.format == "responses" and answer.stop_reason == "completed"
    assert [t.name for t in answer.tool_uses] == ["get_weather", "get_time"]
    assert json.loads(answer.tool_uses[0].arguments) == {"city": "Oslo"}
    if index == 1:
        assert answer.tool_uses[0].fragments == ('{"city":', ' "Oslo"}')
    assert answer.usage["input_tokens"] == 96 and answer.usage["output_tokens"] == 38


def test_usage_in_anthropic_terms_leaves_the_cached_part_out_of_input() -> None:
    it = _cassette("responses/text-basic").interactions[0]
    answer = summarize(ServedAnswer(200, {"content-type": "application/json"}, it.response.body))
    assert answer is not None
    assert (answer.usage["input_tokens"], answer.usage["cache_read_input_tokens"]) == (1250 - 1024, 1024)


def test_mutants_name_an_unknown_reference_gateway_as_bad_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness.cli import main

    assert main(["mutants", "--profile", "responses", "--reference-gateway", "lyroutr", "--list"]) == 3
    assert "did you mean lyrouter?" in capsys.readouterr().err


MARKER = "[gc:responses/state/pass-through#0123abcd]"
RESPONSES = "/v1/responses"


def _replay() -> TestClient:
    client = TestClient(build_app(ReplayState(paths.cassettes_dir())))
    plan = {"cassette": {"responses": "responses/text-basic"}}
    assert (
        client.post("/__gc/cases", json={"marker": MARKER, "rule": "r", "upstream": plan}).status_code == 201
    )
    return client


def _calls(client: TestClient) -> list[tuple[str, str, int]]:
    calls = client.get("/__gc/calls", params={"marker": MARKER}).json()["calls"]
    return [(c["method"], c["path"], c["served"]["status"]) for c in calls]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_gateway_passing_state_on_is_served_as_api_openai_com_serves_it(stream: bool) -> None:
    # A pass-through gateway (LiteLLM's native path) sends previous_response_id, GET and DELETE on to the provider:
    # none of those carries the case marker, the conversation the id names does.
    client = _replay()
    first = client.post(
        RESPONSES, json={"model": "gpt-5.5", "input": f"{MARKER} Remember TULIP.", "stream": stream}
    )
    assert first.status_code == 200
    rid = json.loads(first.text)["id"] if not stream else first.text.split('"id":"', 1)[1].split('"', 1)[0]
    got = client.get(f"{RESPONSES}/{rid}")
    assert got.status_code == 200 and got.json()["id"] == rid and got.json()["object"] == "response"
    assert got.json()["output"][0]["content"][0]["text"]  # the text first answered, streamed or not
    listed = client.get(f"{RESPONSES}/{rid}/input_items").json()
    assert listed["object"] == "list" and listed["has_more"] is False
    (item,) = listed["data"]
    assert item["type"] == "message" and item["role"] == "user" and item["id"] == listed["first_id"]
    assert item["content"] == [{"type": "input_text", "text": f"{MARKER} Remember TULIP."}]
    again = client.post(
        RESPONSES, json={"model": "gpt-5.5", "input": "Which word?", "previous_response_id": rid}
    )
    assert again.status_code == 200 and again.json()["id"] != rid
    assert client.delete(f"{RESPONSES}/{rid}").json() == {"id": rid, "object": "response", "deleted": True}
    gone = client.get(f"{RESPONSES}/{rid}")
    assert (
        gone.status_code == 404 and gone.json()["error"]["message"] == f"Response with id '{rid}' not found."
    )
    after = client.post(RESPONSES, json={"model": "gpt-5.5", "input": "Which?", "previous_response_id": rid})
    assert after.status_code == 400 and after.json()["error"]["code"] == "previous_response_not_found"
    # every call is the case's, as the harness reads a rule's upstream calls
    assert _calls(client) == [
        ("POST", RESPONSES, 200), ("GET", f"{RESPONSES}/{rid}", 200), ("GET", f"{RESPONSES}/{rid}/input_items", 200),
        ("POST", RESPONSES, 200),
        ("DELETE", f"{RESPONSES}/{rid}", 200), ("GET", f"{RESPONSES}/{rid}", 404), ("POST", RESPONSES, 400),
    ]  # fmt: skip


def test_a_response_created_with_store_false_is_not_found_and_the_call_is_the_cases() -> None:
    client = _replay()
    first = client.post(RESPONSES, json={"model": "gpt-5.5", "input": f"{MARKER} Remember.", "store": False})
    rid = first.json()["id"]
    assert client.get(f"{RESPONSES}/{rid}").status_code == 404
    again = client.post(RESPONSES, json={"model": "gpt-5.5", "input": "Which?", "previous_response_id": rid})
    assert again.status_code == 400 and again.json()["error"]["param"] == "previous_response_id"
    assert [status for _, _, status in _calls(client)] == [200, 404, 400]


def test_an_id_never_issued_is_404_and_a_forgotten_case_keeps_nothing() -> None:
    client = _replay()
    rid = client.post(RESPONSES, json={"model": "gpt-5.5", "input": f"{MARKER} Hi."}).json()["id"]
    assert client.get(f"{RESPONSES}/resp_never_issued").status_code == 404
    client.delete("/__gc/cases", params={"marker": MARKER})
    assert client.get(f"{RESPONSES}/{rid}").status_code == 404  # the case is gone, and what it kept with it
    unmarked = client.post(
        RESPONSES, json={"model": "gpt-5.5", "input": "Which?", "previous_response_id": rid}
    )
    assert unmarked.status_code == 400 and "no case marker" in unmarked.json()["error"]["message"]


@pytest.mark.parametrize("anthropic", [False, True], ids=["openai", "anthropic"])
def test_the_provider_lists_its_models_in_its_own_shape(anthropic: bool) -> None:
    # A gateway that passes GET /v1/models on to its provider (Portkey) reads the provider's own list.
    client = _replay()
    got = client.get("/v1/models", headers={"anthropic-version": "2023-06-01"} if anthropic else {})
    assert got.status_code == 200
    body = got.json()
    if anthropic:
        assert body["has_more"] is False and {m["type"] for m in body["data"]} == {"model"}
        assert "claude-sonnet-5-5" in [m["id"] for m in body["data"]]
    else:
        assert body["object"] == "list" and {m["object"] for m in body["data"]} == {"model"}
        assert {"gpt-5.5", "gpt-4.1"} <= {m["id"] for m in body["data"]}
