"""langchain-python (langchain-openai's ChatOpenAI): invoke, stream, bind_tools, with_structured_output
(method json_schema: response_format). It raises the openai SDK's exceptions through."""

from __future__ import annotations

from typing import Any

from harness.clients.drivers.base import (
    CLIENT_TIMEOUT,
    PythonDriver,
    classify_openai,
    langchain_tool_round_trip,
    openai_tools,
    pydantic_model,
)
from harness.clients.observation import Job, Observation, ToolCall

TIMEOUT = CLIENT_TIMEOUT


CLIENTS: list[Any] = []  # this job's HTTP client, closed when the job ends


def _chat(job: Job, **extra: Any) -> Any:
    import openai
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    # An HTTP client of the job's own: langchain-openai's default one is cached per base URL for the process and
    # never closed, so its sockets were left for the garbage collector (a ResourceWarning in whatever ran next).
    http_client = openai.DefaultHttpxClient(timeout=TIMEOUT)
    CLIENTS.append(http_client)
    return ChatOpenAI(
        model=job.model,
        base_url=job.base_url,
        default_headers=dict(job.headers) or None,
        api_key=SecretStr(job.key),
        max_retries=job.scenario.retries,
        timeout=TIMEOUT,
        http_client=http_client,
        **extra,
    )


def _calls(message: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(id=c.get("id"), name=c["name"], arguments=c["args"]) for c in message.tool_calls)


def _invoke(job: Job) -> Observation:
    return Observation(text=_chat(job).invoke(job.prompt).content)


def _stream(job: Job) -> Observation:
    text = "".join(str(chunk.content) for chunk in _chat(job).stream(job.prompt))
    return Observation(text=text)


def _tool_round_trip(job: Job) -> Observation:
    first, second = langchain_tool_round_trip(_chat(job).bind_tools(openai_tools(job)), job)
    return Observation(text=second.content, tool_calls=_calls(first))


def _parallel_tools_stream(job: Job) -> Observation:
    chat = _chat(job).bind_tools(openai_tools(job))
    total: Any = None
    for chunk in chat.stream(job.prompt):
        total = chunk if total is None else total + chunk
    return Observation(tool_calls=_calls(total) if total is not None else ())


def _structured(job: Job) -> Observation:
    model = pydantic_model(job)
    result = _chat(job).with_structured_output(model, method="json_schema", strict=True).invoke(job.prompt)
    return Observation(parsed=result.model_dump() if result is not None else None)


def _stream_usage(job: Job) -> Observation:
    total: Any = None
    for chunk in _chat(job, stream_usage=True).stream(job.prompt):
        total = chunk if total is None else total + chunk
    meta = getattr(total, "usage_metadata", None) or {}
    usage = {
        "prompt_tokens": meta.get("input_tokens"),
        "completion_tokens": meta.get("output_tokens"),
        "total_tokens": meta.get("total_tokens"),
    }
    return Observation(text=str(total.content) if total is not None else None, usage=usage if meta else None)


SCENARIOS = {
    "text": _invoke,
    "stream-text": _stream,
    "tool-round-trip": _tool_round_trip,
    "parallel-tools-stream": _parallel_tools_stream,
    "structured-output": _structured,
    "stream-usage": _stream_usage,
}


def scenario(job: Job) -> Observation:
    try:
        return SCENARIOS.get(job.scenario.id, _stream if job.scenario.stream else _invoke)(job)
    finally:
        while CLIENTS:
            CLIENTS.pop().close()


DRIVER = PythonDriver(
    id="langchain-python",
    packages=("langchain-openai", "langchain-core", "openai"),
    module="langchain_openai",
    scenario=scenario,
    classify=classify_openai,
)
