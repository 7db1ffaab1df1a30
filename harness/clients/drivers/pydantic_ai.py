"""pydantic-ai: an Agent on OpenAIChatModel (an AsyncOpenAI client pointed at the gateway) — run / run_stream,
a tool from a JSON schema that the agent loop runs itself, NativeOutput (response_format json_schema) for
the typed object; the streamed parallel tool calls through the direct API's model_request_stream (one turn,
no loop). Its own exceptions (ModelHTTPError and kin) carry the status."""

from __future__ import annotations

from typing import Any

from harness.clients.drivers.base import PythonDriver, openai_options, pydantic_model, raised, run_closing
from harness.clients.observation import Job, Observation, Raised, ToolCall, arguments

CLIENTS: list[Any] = []  # this run's AsyncOpenAI clients, closed before its event loop ends


def _model(job: Job) -> Any:
    import openai
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = openai.AsyncOpenAI(**openai_options(job))
    CLIENTS.append(client)
    return OpenAIChatModel(job.model, provider=OpenAIProvider(openai_client=client))


def _tools(job: Job) -> list[Any]:
    from pydantic_ai import Tool

    def answer(**_: Any) -> str:
        return job.scenario.tool_result or "{}"

    return [
        Tool.from_schema(answer, name=t.name, description=t.description, json_schema=dict(t.parameters))
        for t in job.scenario.tools
    ]


def _calls(messages: Any) -> tuple[ToolCall, ...]:
    from pydantic_ai.messages import ModelResponse, ToolCallPart

    return tuple(
        ToolCall(id=p.tool_call_id, name=p.tool_name, arguments=arguments(p.args))
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    )


def _usage(u: Any) -> dict[str, Any]:
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
    }


async def _run(job: Job) -> Observation:
    from pydantic_ai import Agent, NativeOutput

    sid = job.scenario.id
    if sid == "tool-round-trip":
        result = await Agent(_model(job), tools=_tools(job)).run(job.prompt)
        return Observation(text=result.output, tool_calls=_calls(result.all_messages()))
    if sid == "parallel-tools-stream":
        from pydantic_ai.direct import model_request_stream
        from pydantic_ai.messages import ModelRequest
        from pydantic_ai.models import ModelRequestParameters
        from pydantic_ai.tools import ToolDefinition

        tools = [ToolDefinition(name=t.name, description=t.description, parameters_json_schema=dict(t.parameters))
                 for t in job.scenario.tools]  # fmt: skip
        params = ModelRequestParameters(function_tools=tools, allow_text_output=True)
        async with model_request_stream(
            _model(job), [ModelRequest.user_text_prompt(job.prompt)], model_request_parameters=params
        ) as stream:
            async for _ in stream:
                pass
            response = stream.get()
        return Observation(tool_calls=_calls([response]), notes=("direct.model_request_stream",))
    if sid == "structured-output":
        result = await Agent(_model(job), output_type=NativeOutput(pydantic_model(job))).run(job.prompt)
        output: Any = result.output  # the typed object NativeOutput asked for
        return Observation(parsed=output.model_dump())
    if job.scenario.stream:
        async with Agent(_model(job)).run_stream(job.prompt) as streamed:
            text = "".join([t async for t in streamed.stream_text(delta=True)])
            usage = _usage(streamed.usage)
        return Observation(text=text, usage=usage, notes=("run_stream",))
    result = await Agent(_model(job)).run(job.prompt)
    return Observation(text=result.output, notes=("run",))


def scenario(job: Job) -> Observation:
    return run_closing(_run, job, CLIENTS)


def classify(exc: BaseException) -> Raised:
    from pydantic_ai import exceptions as e

    from harness.clients.drivers.base import classify_openai

    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(exc, getattr(e, "ModelRateLimitError", ())) or status == 429:
        return raised("rate_limit", exc, status)
    if isinstance(exc, getattr(e, "ModelAuthenticationError", ())) or status == 401:
        return raised("authentication", exc, status)
    if isinstance(exc, e.ModelHTTPError | getattr(e, "ModelAPIError", e.ModelHTTPError)):
        return raised("api_error", exc, status)
    found = classify_openai(exc)  # an openai error raised through (a stream's mid-way error)
    return found if found.kind != "other" else raised("other", exc, status)


DRIVER = PythonDriver(
    id="pydantic-ai",
    packages=("pydantic-ai-slim", "openai"),
    module="pydantic_ai",
    scenario=scenario,
    classify=classify,
)
