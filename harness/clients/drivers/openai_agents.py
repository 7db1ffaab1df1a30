"""openai-agents: an Agent over the Chat Completions model (OpenAIChatCompletionsModel, client `openai-agents`) or
over its default, the Responses model (OpenAIResponsesModel, client `openai-agents-responses`), on an AsyncOpenAI
client pointed at the gateway — Runner.run / run_streamed, a function tool the agent loop runs itself,
output_type for structured output. Tracing is off: it would export to OpenAI. It raises the openai SDK's
exceptions through."""

from __future__ import annotations

import json
from typing import Any

from harness.clients.drivers.base import (
    PythonDriver,
    classify_openai,
    openai_options,
    pydantic_model,
    run_closing,
)
from harness.clients.observation import Job, Observation, ToolCall, arguments

CLIENTS: list[Any] = []  # this run's AsyncOpenAI clients, closed before its event loop ends


def _agent(job: Job, responses: bool, **extra: Any) -> Any:
    import openai
    from agents import (
        Agent,
        ModelSettings,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(**openai_options(job))
    CLIENTS.append(client)
    kind = OpenAIResponsesModel if responses else OpenAIChatCompletionsModel
    model = kind(model=job.model, openai_client=client)
    # include_usage: the Chat Completions model asks for the usage chunk only when told (its default is None).
    settings = ModelSettings(include_usage=True) if job.scenario.include_usage else ModelSettings()
    return Agent(name="gc-client", model=model, model_settings=settings, **extra)


def tools(job: Job) -> list[Any]:
    from agents import FunctionTool

    async def answer(_ctx: Any, _args: str) -> str:
        return job.scenario.tool_result or "{}"

    return [
        FunctionTool(
            name=t.name,
            description=t.description,
            params_json_schema=dict(t.parameters),
            on_invoke_tool=answer,
            strict_json_schema=True,
        )
        for t in job.scenario.tools
    ]


def calls(result: Any) -> tuple[ToolCall, ...]:
    from agents import ToolCallItem

    out = []
    for item in result.new_items:
        if isinstance(item, ToolCallItem):
            raw: Any = item.raw_item  # a function call item here (the union types every kind of call)
            out.append(
                ToolCall(id=getattr(raw, "call_id", None), name=raw.name, arguments=arguments(raw.arguments))
            )
    return tuple(out)


async def _run(job: Job, responses: bool = False) -> Observation:
    from agents import Runner

    sid = job.scenario.id
    if sid == "tool-round-trip":
        result = await Runner.run(_agent(job, responses, tools=tools(job)), job.prompt, max_turns=3)
        return Observation(text=str(result.final_output), tool_calls=calls(result))
    if sid == "parallel-tools-stream":
        # The tools' results end the run: the scenario is the one streamed turn with two calls.
        agent = _agent(job, responses, tools=tools(job), tool_use_behavior="stop_on_first_tool")
        streamed = Runner.run_streamed(agent, job.prompt, max_turns=2)
        async for _ in streamed.stream_events():
            pass
        return Observation(tool_calls=calls(streamed))
    if sid == "structured-output":
        result = await Runner.run(
            _agent(job, responses, output_type=pydantic_model(job)), job.prompt, max_turns=1
        )
        out = result.final_output
        return Observation(parsed=out.model_dump() if hasattr(out, "model_dump") else json.loads(str(out)))
    if job.scenario.stream:
        streamed = Runner.run_streamed(_agent(job, responses), job.prompt, max_turns=1)
        async for _ in streamed.stream_events():
            pass
        u = streamed.context_wrapper.usage
        usage = {
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.total_tokens,
        }
        return Observation(text=str(streamed.final_output), usage=usage, notes=("Runner.run_streamed",))
    result = await Runner.run(_agent(job, responses), job.prompt, max_turns=1)
    return Observation(text=str(result.final_output), notes=("Runner.run",))


def scenario(job: Job) -> Observation:
    return run_closing(_run, job, CLIENTS)


def _run_responses(job: Job) -> Any:
    return _run(job, responses=True)


def scenario_responses(job: Job) -> Observation:
    return run_closing(_run_responses, job, CLIENTS)


DRIVER = PythonDriver(
    id="openai-agents",
    packages=("openai-agents", "openai"),
    module="agents",
    scenario=scenario,
    classify=classify_openai,
)

# The Agents SDK's default model path: the Responses model, on /v1/responses.
DRIVER_RESPONSES = PythonDriver(
    id="openai-agents-responses",
    packages=("openai-agents", "openai"),
    module="agents",
    scenario=scenario_responses,
    classify=classify_openai,
)
