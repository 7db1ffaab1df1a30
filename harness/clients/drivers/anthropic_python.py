"""anthropic-python: the official Anthropic SDK through a gateway's `/v1/messages` — `messages.create`
(with `with_raw_response`), the `messages.stream` helper and its final message, a tool round trip with the
`tool_use` id sent back in a `tool_result`, `messages.parse` with a pydantic model, and its error classes.

The gateway URL the harness holds is `…/v1` (as for every surface); the SDK takes the part before `/v1` and adds
it itself (docs/wire-reference.md §1.1)."""

from __future__ import annotations

from typing import Any

from harness.clients.drivers.base import CLIENT_TIMEOUT, PythonDriver, classify_sdk, pydantic_model
from harness.clients.observation import Job, Observation, Raised, ToolCall

MAX_TOKENS = 1024  # Messages requires max_tokens; the scripted answers are short


def sdk_base_url(gateway_url: str) -> str:
    """The base URL an Anthropic SDK takes for a gateway URL `…/v1`: the SDK posts to `{base}/v1/messages`."""
    base = gateway_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _client(job: Job) -> Any:
    import anthropic

    return anthropic.Anthropic(
        base_url=sdk_base_url(job.base_url),
        api_key=job.key,
        max_retries=job.scenario.retries,
        timeout=CLIENT_TIMEOUT,
        default_headers=dict(job.headers) or None,
    )


def _tools(job: Job) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in job.scenario.tools
    ]


def _user(job: Job) -> list[dict[str, Any]]:
    return [{"role": "user", "content": job.prompt}]


def _text_of(message: Any) -> str | None:
    texts = [b.text for b in message.content if getattr(b, "type", None) == "text"]
    return "".join(texts) if texts else None


def _calls(message: Any) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=b.id, name=b.name, arguments=dict(b.input))
        for b in message.content
        if b.type == "tool_use"
    )


def _usage(message: Any) -> dict[str, int]:
    """The Message's usage in the scenarios' words: the whole input (with cache reads and writes) is the prompt."""
    u = message.usage
    prompt = u.input_tokens + (u.cache_read_input_tokens or 0) + (u.cache_creation_input_tokens or 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
    }


def _create(job: Job, **extra: Any) -> Any:
    args: dict[str, Any] = {"model": job.model, "max_tokens": MAX_TOKENS, "messages": _user(job)}
    if job.scenario.tools:
        args["tools"] = _tools(job)
    return _client(job).messages.create(**{**args, **extra})


def _text(job: Job) -> Observation:
    raw = _client(job).messages.with_raw_response.create(
        model=job.model, max_tokens=MAX_TOKENS, messages=_user(job)
    )
    message = raw.parse()
    return Observation(
        text=_text_of(message), usage=_usage(message), notes=(f"with_raw_response: HTTP {raw.status_code}",)
    )


def _stream(job: Job) -> Observation:
    args: dict[str, Any] = {"model": job.model, "max_tokens": MAX_TOKENS, "messages": _user(job)}
    if job.scenario.tools:
        args["tools"] = _tools(job)
    with _client(job).messages.stream(**args) as stream:
        for _ in stream:
            pass
        final = stream.get_final_message()
    return Observation(
        text=_text_of(final), tool_calls=_calls(final), usage=_usage(final), notes=("messages.stream",)
    )


def _tool_round_trip(job: Job) -> Observation:
    first = _create(job)
    calls = _calls(first)
    convo: list[Any] = [
        *_user(job),
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
    ]
    results = [
        {"type": "tool_result", "tool_use_id": c.id, "content": job.scenario.tool_result or ""} for c in calls
    ]
    convo.append({"role": "user", "content": results})
    second = _client(job).messages.create(
        model=job.model, max_tokens=MAX_TOKENS, messages=convo, tools=_tools(job)
    )
    return Observation(text=_text_of(second), tool_calls=calls)


def _structured(job: Job) -> Observation:
    message = _client(job).messages.parse(
        model=job.model, max_tokens=MAX_TOKENS, messages=_user(job), output_format=pydantic_model(job)
    )
    parsed = message.parsed_output
    return Observation(parsed=parsed.model_dump() if parsed is not None else None, notes=("messages.parse",))


def _plain(job: Job) -> Observation:
    message = _create(job)
    return Observation(text=_text_of(message), tool_calls=_calls(message))


SCENARIOS = {"text": _text, "tool-round-trip": _tool_round_trip, "structured-output": _structured}


def scenario(job: Job) -> Observation:
    run = SCENARIOS.get(job.scenario.id)
    if run is None:
        run = _stream if job.scenario.stream else _plain
    return run(job)


def classify_anthropic(exc: BaseException) -> Raised:
    import anthropic

    return classify_sdk(exc, anthropic)


DRIVER = PythonDriver(
    id="anthropic-python",
    packages=("anthropic",),
    module="anthropic",
    scenario=scenario,
    classify=classify_anthropic,
)
