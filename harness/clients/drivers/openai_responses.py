"""openai-python's `client.responses`: `create` (with `with_raw_response`), the stream helper
(`responses.stream`, whose final response is what the stream's terminal event carried), `parse` with
`text_format` (a pydantic model), and the raw event iterator. The same library as openai_python.py, through the
Responses API: what Codex-era applications and the Agents SDK's default path call."""

from __future__ import annotations

import json
from typing import Any

from harness.clients.drivers.base import PythonDriver, classify_openai, openai_options, pydantic_model
from harness.clients.observation import Job, Observation, ToolCall, arguments


def _client(job: Job) -> Any:
    import openai

    return openai.OpenAI(**openai_options(job))


def function_tools(job: Job) -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": t.name, "description": t.description, "parameters": dict(t.parameters)}
        for t in job.scenario.tools
    ]


def response_calls(response: Any) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=item.call_id, name=item.name, arguments=arguments(item.arguments))
        for item in response.output
        if item.type == "function_call"
    )


def response_usage(response: Any) -> dict[str, Any] | None:
    usage = response.usage
    if usage is None:
        return None
    # The scenarios speak Chat Completions' names; Responses' are input, output and total tokens.
    return {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens}  # fmt: skip


def _text(job: Job) -> Observation:
    raw = _client(job).responses.with_raw_response.create(model=job.model, input=job.prompt)
    response = raw.parse()
    return Observation(
        text=response.output_text,
        usage=response_usage(response),
        notes=(f"with_raw_response: HTTP {raw.status_code}",),
    )


def _stream_final(job: Job, **extra: Any) -> Any:
    with _client(job).responses.stream(model=job.model, input=job.prompt, **extra) as stream:
        for _ in stream:
            pass
        return stream.get_final_response()


def _stream_text(job: Job) -> Observation:
    final = _stream_final(job)
    return Observation(text=final.output_text, usage=response_usage(final), notes=("responses.stream",))


def _tool_round_trip(job: Job) -> Observation:
    client = _client(job)
    first = client.responses.create(model=job.model, input=job.prompt, tools=function_tools(job))
    calls = response_calls(first)
    history: list[Any] = [{"role": "user", "content": job.prompt}]
    for item in first.output:
        if item.type == "function_call":
            history.append({"type": "function_call", "call_id": item.call_id, "name": item.name,
                            "arguments": item.arguments})  # fmt: skip
            history.append({"type": "function_call_output", "call_id": item.call_id,
                            "output": job.scenario.tool_result or ""})  # fmt: skip
    second = client.responses.create(model=job.model, input=history, tools=function_tools(job))
    return Observation(text=second.output_text, tool_calls=calls)


def _parallel_tools_stream(job: Job) -> Observation:
    final = _stream_final(job, tools=function_tools(job))
    return Observation(tool_calls=response_calls(final), notes=("responses.stream",))


def _structured(job: Job) -> Observation:
    response = _client(job).responses.parse(
        model=job.model, input=job.prompt, text_format=pydantic_model(job)
    )
    parsed = response.output_parsed
    return Observation(parsed=parsed.model_dump() if parsed is not None else None)


def _stream_collect(job: Job) -> Observation:
    """The raw event iterator, as an application without the helper reads it: the text deltas joined; an
    `error` event raises (the SDK turns it into an APIError)."""
    stream = _client(job).responses.create(model=job.model, input=job.prompt, stream=True)
    text = ""
    for event in stream:
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type in ("error", "response.failed"):
            raise RuntimeError(f"the stream failed: {json.dumps(event.model_dump(), default=str)[:300]}")
    return Observation(text=text)


def _plain(job: Job) -> Observation:
    response = _client(job).responses.create(model=job.model, input=job.prompt)
    return Observation(text=response.output_text, usage=response_usage(response))


SCENARIOS = {
    "text": _text,
    "stream-text": _stream_text,
    "tool-round-trip": _tool_round_trip,
    "parallel-tools-stream": _parallel_tools_stream,
    "structured-output": _structured,
    "stream-usage": _stream_text,
    "mid-stream-error": _stream_collect,
}


def scenario(job: Job) -> Observation:
    return SCENARIOS.get(job.scenario.id, _stream_collect if job.scenario.stream else _plain)(job)


DRIVER = PythonDriver(
    id="openai-python-responses",
    packages=("openai",),
    module="openai",
    scenario=scenario,
    classify=classify_openai,
)
