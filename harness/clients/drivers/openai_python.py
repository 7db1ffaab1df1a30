"""openai-python: the official SDK, sync and async — `create` (with `with_raw_response`), the streaming
helpers (`chat.completions.stream`), `parse` with a pydantic model, and the raw chunk iterator."""

from __future__ import annotations

import asyncio
from typing import Any

from harness.clients.drivers.base import (
    PythonDriver,
    classify_openai,
    messages,
    openai_options,
    openai_tools,
    pydantic_model,
)
from harness.clients.observation import Job, Observation, ToolCall, arguments


def _client(job: Job) -> Any:
    import openai

    return openai.OpenAI(**openai_options(job))


def _calls(message: Any) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=c.id, name=c.function.name, arguments=arguments(c.function.arguments))
        for c in (message.tool_calls or [])
    )


def _text(job: Job) -> Observation:
    # with_raw_response: the status and headers an application can read, then the parsed completion.
    raw = _client(job).chat.completions.with_raw_response.create(model=job.model, messages=messages(job))
    completion = raw.parse()
    return Observation(
        text=completion.choices[0].message.content, notes=(f"with_raw_response: HTTP {raw.status_code}",)
    )


async def _stream_text_async(job: Job) -> Observation:
    import openai

    client = openai.AsyncOpenAI(**openai_options(job))
    async with client.chat.completions.stream(model=job.model, messages=messages(job)) as stream:
        async for _ in stream:
            pass
        final = await stream.get_final_completion()
    await client.close()
    return Observation(text=final.choices[0].message.content, notes=("AsyncOpenAI chat.completions.stream",))


def _stream_text(job: Job) -> Observation:
    return asyncio.run(_stream_text_async(job))


def _tool_round_trip(job: Job) -> Observation:
    client = _client(job)
    convo: list[Any] = messages(job)
    first = client.chat.completions.create(model=job.model, messages=convo, tools=openai_tools(job))
    message = first.choices[0].message
    calls = _calls(message)
    convo.append(message.model_dump(exclude_none=True))
    for call in message.tool_calls or []:
        convo.append({"role": "tool", "tool_call_id": call.id, "content": job.scenario.tool_result or ""})
    second = client.chat.completions.create(model=job.model, messages=convo, tools=openai_tools(job))
    return Observation(text=second.choices[0].message.content, tool_calls=calls)


def _parallel_tools_stream(job: Job) -> Observation:
    with _client(job).chat.completions.stream(
        model=job.model, messages=messages(job), tools=openai_tools(job)
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    return Observation(tool_calls=_calls(final.choices[0].message), notes=("chat.completions.stream",))


def _structured(job: Job) -> Observation:
    model = pydantic_model(job)
    completion = _client(job).chat.completions.parse(
        model=job.model, messages=messages(job), response_format=model
    )
    parsed = completion.choices[0].message.parsed
    return Observation(parsed=parsed.model_dump() if parsed is not None else None)


def _stream_usage(job: Job) -> Observation:
    stream = _client(job).chat.completions.create(
        model=job.model, messages=messages(job), stream=True, stream_options={"include_usage": True}
    )
    text, usage = "", None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.usage is not None:
            usage = chunk.usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
    return Observation(text=text, usage=usage)


def _stream_collect(job: Job) -> Observation:
    stream = _client(job).chat.completions.create(model=job.model, messages=messages(job), stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    return Observation(text=text)


def _plain(job: Job) -> Observation:
    completion = _client(job).chat.completions.create(model=job.model, messages=messages(job))
    return Observation(text=completion.choices[0].message.content)


SCENARIOS = {
    "text": _text,
    "stream-text": _stream_text,
    "tool-round-trip": _tool_round_trip,
    "parallel-tools-stream": _parallel_tools_stream,
    "structured-output": _structured,
    "stream-usage": _stream_usage,
    "mid-stream-error": _stream_collect,
}


def scenario(job: Job) -> Observation:
    return SCENARIOS.get(job.scenario.id, _stream_collect if job.scenario.stream else _plain)(job)


DRIVER = PythonDriver(
    id="openai-python", packages=("openai",), module="openai", scenario=scenario, classify=classify_openai
)
