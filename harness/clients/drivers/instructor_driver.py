"""instructor: `instructor.from_openai(OpenAI(...), mode=JSON_SCHEMA)` — the typed object through
response_model (response_format json_schema, which the scenario's provider answers as text); every other
scenario through the patched `create` with response_model=None, as an application mixing both does.
Its own errors (InstructorRetryException) chain the openai SDK's; classify_openai follows the chain."""

from __future__ import annotations

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
    import instructor
    import openai

    raw = openai.OpenAI(**openai_options(job))
    return instructor.from_openai(raw, mode=instructor.Mode.JSON_SCHEMA)


def _calls(message: Any) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=c.id, name=c.function.name, arguments=arguments(c.function.arguments))
        for c in (message.tool_calls or [])
    )


def _streamed(stream: Any) -> tuple[str, dict[str, Any] | None, tuple[ToolCall, ...]]:
    text, usage = "", None
    parts: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for frag in delta.tool_calls or []:
            part = parts.setdefault(frag.index, {"id": None, "name": "", "arguments": ""})
            part["id"] = part["id"] or frag.id
            if frag.function is not None:
                part["name"] += frag.function.name or ""
                part["arguments"] += frag.function.arguments or ""
    calls = tuple(ToolCall(p["id"], p["name"], arguments(p["arguments"])) for _, p in sorted(parts.items()))
    return text, usage, calls


def scenario(job: Job) -> Observation:
    client, s = _client(job), job.scenario
    base: dict[str, Any] = {"model": job.model, "messages": messages(job), "max_retries": 0}
    if s.object_name:
        parsed = client.chat.completions.create(response_model=pydantic_model(job), **base)
        return Observation(parsed=parsed.model_dump(), notes=("response_model, Mode.JSON_SCHEMA",))
    if s.tools:
        base["tools"] = openai_tools(job)
    if s.stream:
        extra = {"stream_options": {"include_usage": True}} if s.include_usage else {}
        stream = client.chat.completions.create(response_model=None, stream=True, **base, **extra)
        text, usage, calls = _streamed(stream)
        return Observation(text=text, usage=usage, tool_calls=calls)
    first = client.chat.completions.create(response_model=None, **base)
    message = first.choices[0].message
    if s.tool_result is None or not message.tool_calls:
        return Observation(text=message.content, tool_calls=_calls(message))
    # The assistant turn spelled out, content included (instructor reads every message's `content`).
    turn = {
        "role": "assistant",
        "content": message.content,
        "tool_calls": [c.model_dump() for c in message.tool_calls],
    }
    convo = [*base["messages"], turn]
    convo += [{"role": "tool", "tool_call_id": c.id, "content": s.tool_result} for c in message.tool_calls]
    second = client.chat.completions.create(response_model=None, **{**base, "messages": convo})
    return Observation(text=second.choices[0].message.content, tool_calls=_calls(message))


DRIVER = PythonDriver(
    id="instructor",
    packages=("instructor", "openai"),
    module="instructor",
    scenario=scenario,
    classify=classify_openai,
)
