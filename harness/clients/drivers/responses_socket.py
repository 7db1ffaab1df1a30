"""The Responses API over a WebSocket, as applications drive it: openai-python's `client.responses.connect()` (a
`ResponsesConnection`: `response.create` on the open socket, its events iterated to the terminal one; a tool
result sent back with `previous_response_id` on the same socket) and the Agents SDK's `OpenAIResponsesWSModel`
(`Runner.run` / `run_streamed` with its model on a socket).

Neither library retries a turn the provider refused: a 429 arrives as an in-band `error` event (openai-python yields
it, the Agents SDK raises `ResponsesWebSocketError`), and their reconnection is for a dropped socket, so the
scenario that needs a library retry is not theirs. A refused upgrade is the websockets library's `InvalidStatus`,
which both let through; a failed turn is the in-band event, named here by its `status`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.clients.drivers import openai_agents
from harness.clients.drivers.base import (
    PythonDriver,
    classify_openai,
    openai_options,
    pydantic_model,
    raised,
    run_closing,
)
from harness.clients.drivers.openai_responses import function_tools, response_calls, response_usage
from harness.clients.observation import Job, Observation, Raised
from harness.errors import InBandError

TERMINAL = ("response.completed", "response.incomplete", "response.failed")
NO_TURN_RETRY = (
    "a turn the provider refused (429) comes back on the socket as an error event; the library's reconnection is "
    "for a dropped socket and it resends no turn, so there is no library retry to observe"
)


def _kind(status: int | None) -> str:
    return {401: "authentication", 429: "rate_limit"}.get(status or 0, "api_error")


def classify(exc: BaseException) -> Raised:
    """A refused upgrade (websockets' InvalidStatus), an in-band error event (openai-python's, or the Agents SDK's
    ResponsesWebSocketError), else the openai SDK's own exceptions."""
    from websockets.exceptions import InvalidStatus

    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, InvalidStatus):
            status = seen.response.status_code
            return raised(_kind(status), exc, status)
        payload = getattr(seen, "event", None) or getattr(seen, "payload", None)
        if isinstance(payload, Mapping) and payload.get("type") == "error":
            said = payload.get("status")
            status_said = said if isinstance(said, int) else None
            return raised(_kind(status_said), exc, status_said)
        seen = seen.__cause__ or seen.__context__
    return classify_openai(exc)


# ------------------------------------------------------------------------------------------ openai-python


def _object_schema(job: Job) -> dict[str, Any]:
    fields = job.scenario.object_fields
    return {"type": "object", "properties": {name: {"type": kind} for name, kind in fields.items()},
            "required": list(fields), "additionalProperties": False}  # fmt: skip


def _turn(connection: Any, job: Job, **params: Any) -> tuple[Any, str]:
    """One `response.create` on the socket, its events read to the terminal one: (the response, the text deltas
    joined); an `error` event raises."""
    connection.response.create(model=job.model, **params)
    text = ""
    for event in connection:
        if event.type == "error":
            raise InBandError(event.model_dump())
        if event.type == "response.output_text.delta":
            text += event.delta
        if event.type in TERMINAL:
            if event.type == "response.failed":
                raise InBandError({"type": "error", "error": event.response.model_dump().get("error")})
            return event.response, text
    raise RuntimeError("the WebSocket closed before the turn's terminal event")


def scenario(job: Job) -> Observation:
    import openai

    client = openai.OpenAI(**openai_options(job))
    try:
        with client.responses.connect() as connection:
            sid = job.scenario.id
            if sid == "tool-round-trip":
                first, _ = _turn(connection, job, input=job.prompt, tools=function_tools(job))
                outputs = [{"type": "function_call_output", "call_id": c.call_id,
                            "output": job.scenario.tool_result or ""}
                           for c in first.output if c.type == "function_call"]  # fmt: skip
                second, _ = _turn(
                    connection, job, input=outputs, tools=function_tools(job), previous_response_id=first.id
                )
                return Observation(
                    text=second.output_text, tool_calls=response_calls(first), notes=("responses.connect",)
                )
            if job.scenario.tools:
                final, _ = _turn(connection, job, input=job.prompt, tools=function_tools(job))
                return Observation(tool_calls=response_calls(final), notes=("responses.connect",))
            if sid == "structured-output":
                text = {"format": {"type": "json_schema", "name": job.scenario.object_name or "Answer",
                                   "schema": _object_schema(job), "strict": True}}  # fmt: skip
                final, _ = _turn(connection, job, input=job.prompt, text=text)
                parsed = pydantic_model(job).model_validate_json(final.output_text)
                return Observation(parsed=parsed.model_dump(), notes=("responses.connect",))
            final, streamed = _turn(connection, job, input=job.prompt)
            text_seen = streamed if job.scenario.stream else final.output_text
            return Observation(text=text_seen, usage=response_usage(final), notes=("responses.connect",))
    finally:
        client.close()


DRIVER = PythonDriver(
    id="openai-python-responses-ws",
    packages=("openai", "websockets"),
    module="openai",
    scenario=scenario,
    classify=classify,
    unsupported={"rate-limit-retry": NO_TURN_RETRY},
)


# ------------------------------------------------------------------------------------------ openai-agents


async def _run_agents(job: Job) -> Observation:
    import openai
    from agents import Agent, ModelSettings, Runner, set_tracing_disabled
    from agents.models.openai_responses import OpenAIResponsesWSModel

    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(**openai_options(job))
    openai_agents.CLIENTS.append(client)
    model = OpenAIResponsesWSModel(model=job.model, openai_client=client)
    try:
        settings = ModelSettings(include_usage=True) if job.scenario.include_usage else ModelSettings()
        sid = job.scenario.id
        if sid == "tool-round-trip":
            agent = Agent(
                name="gc-client", model=model, model_settings=settings, tools=openai_agents.tools(job)
            )
            result = await Runner.run(agent, job.prompt, max_turns=3)
            return Observation(text=str(result.final_output), tool_calls=openai_agents.calls(result))
        if sid == "parallel-tools-stream":
            agent = Agent(name="gc-client", model=model, tools=openai_agents.tools(job),
                          tool_use_behavior="stop_on_first_tool")  # fmt: skip
            streamed = Runner.run_streamed(agent, job.prompt, max_turns=2)
            async for _ in streamed.stream_events():
                pass
            return Observation(tool_calls=openai_agents.calls(streamed))
        if sid == "structured-output":
            agent = Agent(name="gc-client", model=model, output_type=pydantic_model(job))
            out = (await Runner.run(agent, job.prompt, max_turns=1)).final_output
            return Observation(
                parsed=out.model_dump() if hasattr(out, "model_dump") else json.loads(str(out))
            )
        agent = Agent(name="gc-client", model=model, model_settings=settings)
        if job.scenario.stream:
            streamed = Runner.run_streamed(agent, job.prompt, max_turns=1)
            async for _ in streamed.stream_events():
                pass
            u = streamed.context_wrapper.usage
            usage = {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
                     "total_tokens": u.total_tokens}  # fmt: skip
            return Observation(text=str(streamed.final_output), usage=usage, notes=("Runner.run_streamed",))
        result = await Runner.run(agent, job.prompt, max_turns=1)
        return Observation(text=str(result.final_output), notes=("Runner.run",))
    finally:
        await model.close()


def scenario_agents(job: Job) -> Observation:
    return run_closing(_run_agents, job, openai_agents.CLIENTS)


DRIVER_AGENTS = PythonDriver(
    id="openai-agents-responses-ws",
    packages=("openai-agents", "openai", "websockets"),
    module="agents",
    scenario=scenario_agents,
    classify=classify,
    unsupported={"rate-limit-retry": NO_TURN_RETRY},
)
