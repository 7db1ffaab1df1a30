"""OpenAI's Responses API as a provider family (issue 32): the replay refuses what api.openai.com refuses on
/v1/responses, answers a request's own parameters and ids, keeps only what OpenAI keeps; the answer reader reads
its cassettes; `mutants --reference-gateway` names a gateway that serves the catalog."""

from __future__ import annotations

import json

import pytest

from harness import paths
from harness.cassette.document import load_cassette
from harness.checks.answer import summarize
from harness.exchange import ServedAnswer
from harness.families import endpoint_family, endpoint_kind
from harness.replay.app import _fresh_response_id, _keep_response, _unkept_previous
from harness.replay.plan import as_asked, cassette_answer
from harness.replay.state import Case
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
    case = Case(marker="m", rule="r", upstream={}, cassette=None)
    answer = _fresh_response_id("openai.responses", cassette_answer(_cassette("responses/text-basic"), 0))
    kept_id = json.loads(answer.body)["id"]
    _keep_response(case, "openai.responses", {"model": "gpt-5.5", "input": "hi", "store": False}, answer)
    assert _unkept_previous(case, "openai.responses", {"previous_response_id": kept_id}) == kept_id
    _keep_response(case, "openai.responses", {"model": "gpt-5.5", "input": "hi"}, answer)
    assert _unkept_previous(case, "openai.responses", {"previous_response_id": kept_id}) is None
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
