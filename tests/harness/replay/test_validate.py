"""harness.replay.validate: the replay upstream refuses what the provider it plays refuses, and only that."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from harness.checks import run_checks
from harness.exchange import Exchange, ReceivedResponse, SentRequest, ServedAnswer, UpstreamCall
from harness.replay.fixtures import tiny_jpeg, tiny_png
from harness.replay.validate import refusal

PNG = base64.b64encode(tiny_png()).decode()
USER = {"role": "user", "content": "hi"}


def _body(**extra: Any) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 1024, "messages": [USER], **extra}


def _image(media: str, data: str) -> dict[str, Any]:
    block = {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"role": "user", "content": [block, {"type": "text", "text": "what is it?"}]}


TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}
TOOL_RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
CACHED = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}

ACCEPTED = {
    "plain": _body(),
    "temperature 1": _body(temperature=1),
    "thinking 1024 < 2048": _body(max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024}),
    "thinking disabled": _body(thinking={"type": "disabled"}),
    "tool loop": _body(messages=[USER, TOOL_USE, TOOL_RESULT]),
    "trailing tool_use": _body(messages=[USER, TOOL_USE]),
    "four breakpoints": _body(
        system=[CACHED, CACHED], messages=[{"role": "user", "content": [CACHED, CACHED]}]
    ),
    "png": _body(messages=[_image("image/png", PNG)]),
    "jpeg": _body(messages=[_image("image/jpeg", base64.b64encode(tiny_jpeg()).decode())]),
    "url image": _body(
        messages=[
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}],
            }
        ]
    ),
    "server tool without schema": _body(tools=[{"type": "web_search_20250305", "name": "web_search"}]),
}

REFUSED = {
    "no max_tokens": ({"model": "m", "messages": [USER]}, "max_tokens"),
    "no messages": (_body(messages=[]), "messages"),
    "temperature 1.5": (_body(temperature=1.5), "temperature: 1.5 is outside [0, 1]"),
    "top_p -1": (_body(top_p=-1), "top_p"),
    "budget below 1024": (
        _body(max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 512}),
        "at least 1024",
    ),
    "budget above max_tokens": (
        _body(thinking={"type": "enabled", "budget_tokens": 8192}),
        "less than max_tokens",
    ),
    "thinking with temperature": (
        _body(max_tokens=4096, temperature=0.5, thinking={"type": "enabled", "budget_tokens": 1024}),
        "temperature",
    ),
    "thinking with forced tool": (
        _body(
            max_tokens=4096, tool_choice={"type": "any"}, thinking={"type": "enabled", "budget_tokens": 1024}
        ),
        "tool_choice",
    ),
    "five breakpoints": (
        _body(system=[CACHED, CACHED, CACHED], messages=[{"role": "user", "content": [CACHED, CACHED]}]),
        "at most 4",
    ),
    "unanswered tool_use": (_body(messages=[USER, TOOL_USE, USER]), "without tool_result"),
    "orphan tool_result": (_body(messages=[USER, TOOL_RESULT]), "no corresponding tool_use"),
    "schema not an object": (
        _body(tools=[{"name": "f", "input_schema": {"type": "string"}}]),
        "input_schema.type",
    ),
    "bad base64": (_body(messages=[_image("image/png", PNG + "A")]), "not valid base64"),
    "png declared as jpeg": (_body(messages=[_image("image/jpeg", PNG)]), "does not decode to image/jpeg"),
    "unsupported media": (_body(messages=[_image("image/bmp", PNG)]), "not supported"),
    "max_tokens as a decimal": (_body(max_tokens=1024.0), "max_tokens: Input should be a valid integer"),
    "top_k as a decimal": (_body(top_k=5.0), "top_k: Input should be a valid integer"),
    "budget as a decimal": (
        _body(max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048.0}),
        "thinking.budget_tokens: Input should be a valid integer",
    ),
}


@pytest.mark.parametrize("body", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_anthropic_accepts(body: dict[str, Any]) -> None:
    assert refusal("anthropic.messages", body) is None


@pytest.mark.parametrize(("body", "says"), REFUSED.values(), ids=REFUSED.keys())
def test_anthropic_refuses(body: dict[str, Any], says: str) -> None:
    problem = refusal("anthropic.messages", body)
    assert problem is not None and says in problem


@pytest.mark.parametrize(
    ("kind", "body", "refused"),
    [
        ("openai.chat", {"model": "m", "messages": [USER], "temperature": 1.5}, False),
        ("openai.chat", {"model": "m", "messages": [USER], "temperature": 2.5}, True),
        ("openai.chat", {"model": "m", "messages": [USER], "n": 0}, True),
        ("openai.chat", {"model": "m", "messages": []}, True),
        ("gemini.generate", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, False),
        ("gemini.generate", {"contents": []}, True),
        (
            "gemini.generate",
            {"contents": [{"parts": [{"text": "x"}]}], "generationConfig": {"topP": 2}},
            True,
        ),
    ],
)
def test_other_families(kind: str, body: dict[str, Any], refused: bool) -> None:
    assert (refusal(kind, body) is not None) is refused


@pytest.mark.parametrize("name", ["seed", "n", "max_tokens", "max_completion_tokens", "top_logprobs"])
def test_openai_integer_parameters_refuse_a_decimal(name: str) -> None:
    """A JSON decimal for an integer parameter is refused even when whole (LYRouter's 19-digit rewrite)."""
    assert refusal("openai.chat", {"model": "m", "messages": [USER], name: 3}) is None
    for value in (3.0, 1.2345678901235e18):
        problem = refusal("openai.chat", {"model": "m", "messages": [USER], name: value})
        assert problem == f"Invalid type for '{name}': expected an integer, but got a decimal number instead."
        assert getattr(problem, "param", None) == name and getattr(problem, "code", None) == "invalid_type"


ANSWER = (
    b'{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,'
    b'"message":{"role":"assistant","content":"hi"},"finish_reason":"stop","logprobs":null}]}'
)


def _exchange(refusals: list[str | None]) -> Exchange:
    calls = tuple(
        UpstreamCall(
            "POST",
            "/v1/messages",
            {},
            b"{}",
            {},
            ServedAnswer(400 if r else 200, {}, b"", provider_refusal=r),
        )
        for r in refusals
    )
    return Exchange(
        rule_id="x/y/z",
        variant={},
        request=SentRequest("POST", "http://gw/v1/chat/completions", {}, b"{}", {}),
        # A well-formed answer, so the implicit shape check (harness/surfaces/chat_completions/shape.py) has nothing to say.
        response=ReceivedResponse(status=200, headers={"content-type": "application/json"}, raw=ANSWER),
        upstream=calls,
    )


def test_a_refused_upstream_request_fails_every_rule_implicitly() -> None:
    (violation,) = run_checks({"status": 200}, _exchange([None, "temperature: 1.5 is outside [0, 1]"]))
    assert violation.check == "provider_accepts" and violation.path == "upstream[1]"
    assert "provider refuses" in violation.message and "temperature" in violation.message
    assert run_checks({"status": 200}, _exchange([None])) == []


def test_provider_accepts_false_requires_the_refusal() -> None:
    assert run_checks({"provider_accepts": False}, _exchange(["temperature: 1.5 is outside [0, 1]"])) == []
    (violation,) = run_checks({"provider_accepts": False}, _exchange([None]))
    assert "every call was accepted" in violation.message


def test_the_openai_refusal_carries_its_param_and_code() -> None:
    """OpenAI's envelope for a decimal seed names the parameter and the code, as the provider's does."""
    import json

    from harness.replay.plan import error_body

    problem = refusal("openai.chat", {"model": "m", "messages": [USER], "seed": 1.5})
    body = json.loads(
        error_body(
            "openai.chat",
            400,
            str(problem),
            "invalid_request_error",
            param=getattr(problem, "param", None),
            code=getattr(problem, "code", None),
        )
    )
    assert body["error"]["param"] == "seed" and body["error"]["code"] == "invalid_type"
    assert "expected an integer, but got a decimal number instead" in body["error"]["message"]


def test_reasoning_models_refuse_what_openai_refuses_for_them() -> None:
    """Audit D6: OpenAI's reasoning models take only the default temperature and top_p, refuse max_tokens
    (max_completion_tokens instead) and logprobs; other models take them."""
    from harness.replay.validate import refusal

    base = {"messages": [{"role": "user", "content": "hi"}]}
    for model in ("gpt-5.5", "o3-mini", "openai/gpt-5"):
        for extra, code in (({"temperature": 1.5}, "unsupported_value"), ({"top_p": 0.5}, "unsupported_value"),
                            ({"max_tokens": 55}, "unsupported_parameter"), ({"logprobs": True}, "unsupported_parameter")):  # fmt: skip
            problem = refusal("openai.chat", {**base, "model": model, **extra})
            assert problem is not None and problem.code == code, (model, extra)
        assert (
            refusal("openai.chat", {**base, "model": model, "temperature": 1, "max_completion_tokens": 55})
            is None
        )
    for extra in ({"temperature": 1.5}, {"max_tokens": 55}, {"logprobs": True}):
        assert refusal("openai.chat", {**base, "model": "gpt-4.1", **extra}) is None


@pytest.mark.parametrize("key", ["n", "user", "stream_options", "response_format", "gc_unknown_field"])
def test_anthropic_refuses_a_field_it_does_not_have(key: str) -> None:
    """Audit D9: Anthropic forbids extra inputs, so an OpenAI field leaking through is a 400 in replay too."""
    problem = refusal("anthropic.messages", _body(**{key: 1}))
    assert problem == f"{key}: Extra inputs are not permitted"


def test_anthropic_takes_every_field_of_its_sdk() -> None:
    """Each top-level field of anthropic's MessageCreateParams (stable and beta) is accepted: the list is not
    stricter than the provider."""
    import typing

    from anthropic.types import message_create_params as stable
    from anthropic.types.beta import message_create_params as beta

    fields = set(typing.get_type_hints(stable.MessageCreateParamsBase)) | set(
        typing.get_type_hints(beta.MessageCreateParamsBase)
    )
    headers = {"anthropic-version": "2023-06-01"}
    # Header-only arguments (they leave as anthropic-* headers) and beta billing fields are not body fields
    # a gateway forwards; the rest must pass.
    for field in fields - {"user_profile_id", "workspace_id", "betas", "billing_policy", "fallback_credit_token",
                           "fallbacks", "compaction", "thread"}:  # fmt: skip
        problem = refusal("anthropic.messages", _body(**{field: None}), headers)
        assert problem is None or "Extra inputs" not in problem, (field, problem)


def test_anthropic_beta_output_format_needs_its_header() -> None:
    """The deprecated `output_format` is the beta spelling: accepted with the structured-outputs beta header."""
    schema = {"type": "json_schema", "schema": {"type": "object"}}
    assert refusal("anthropic.messages", _body(output_format=schema)) is not None
    beta = {"anthropic-beta": "structured-outputs-2025-11-13"}
    assert refusal("anthropic.messages", _body(output_format=schema), beta) is None


@pytest.mark.parametrize("key", ["temperature", "top_p", "top_k"])
def test_anthropic_version_2026_10_21_has_no_sampling_fields(key: str) -> None:
    value = 40 if key == "top_k" else 0.5
    old = {"anthropic-version": "2023-06-01"}
    assert refusal("anthropic.messages", _body(**{key: value}), old) is None
    new = {"Anthropic-Version": "2026-10-21"}
    problem = refusal("anthropic.messages", _body(**{key: value}), new)
    assert problem is not None and problem.startswith(f"{key}: Extra inputs are not permitted")


def test_openai_refuses_stream_options_without_stream() -> None:
    """api.openai.com's 400 (BerriAI/litellm#5803): stream_options only with stream true."""
    body = {"model": "gpt-4.1", "messages": [USER], "stream_options": {"include_usage": True}}
    problem = refusal("openai.chat", body)
    assert problem == "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    assert getattr(problem, "param", None) == "stream_options"
    assert refusal("openai.chat", {**body, "stream": True}) is None
