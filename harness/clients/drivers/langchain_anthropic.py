"""langchain-anthropic (ChatAnthropic) through a gateway's `/v1/messages`: invoke, stream, bind_tools, a tool
round trip with ToolMessage, with_structured_output (method json_schema: output_config.format) and the usage of a
stream. It raises the anthropic SDK's exceptions through; its base URL is the gateway URL without `/v1`."""

from __future__ import annotations

from typing import Any

from harness.clients.drivers.anthropic_python import classify_anthropic, sdk_base_url
from harness.clients.drivers.base import (
    CLIENT_TIMEOUT,
    PythonDriver,
    langchain_tool_round_trip,
    pydantic_model,
)
from harness.clients.observation import Job, Observation, ToolCall


def _chat(job: Job) -> Any:
    from langchain_anthropic import ChatAnthropic

    # Keyword names as langchain-anthropic's docs give them (its pydantic aliases; the type stubs know only the
    # field names), the key as a plain string (pydantic makes it a SecretStr).
    options: dict[str, Any] = {
        "model": job.model,
        "base_url": sdk_base_url(job.base_url),
        "api_key": job.key,
        "max_retries": job.scenario.retries,
        "default_request_timeout": CLIENT_TIMEOUT,
        "default_headers": dict(job.headers) or None,
        "max_tokens": 1024,
    }
    return ChatAnthropic(**options)


def _tools(job: Job) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
        for t in job.scenario.tools
    ]


def _text(message: Any) -> str | None:
    content = message.content
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(texts) if texts else None


def _calls(message: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(id=c.get("id"), name=c["name"], arguments=c["args"]) for c in message.tool_calls)


def _gathered(chat: Any, prompt: Any) -> Any:
    total: Any = None
    for chunk in chat.stream(prompt):
        total = chunk if total is None else total + chunk
    return total


def _usage(message: Any) -> dict[str, Any] | None:
    meta = getattr(message, "usage_metadata", None) or {}
    if not meta:
        return None
    return {"prompt_tokens": meta.get("input_tokens"), "completion_tokens": meta.get("output_tokens"),
            "total_tokens": meta.get("total_tokens")}  # fmt: skip


def _invoke(job: Job) -> Observation:
    chat = _chat(job).bind_tools(_tools(job)) if job.scenario.tools else _chat(job)
    message = chat.invoke(job.prompt)
    return Observation(text=_text(message), tool_calls=_calls(message), usage=_usage(message))


def _stream(job: Job) -> Observation:
    chat = _chat(job).bind_tools(_tools(job)) if job.scenario.tools else _chat(job)
    total = _gathered(chat, job.prompt)
    if total is None:
        return Observation()
    return Observation(text=_text(total), tool_calls=_calls(total), usage=_usage(total))


def _tool_round_trip(job: Job) -> Observation:
    first, second = langchain_tool_round_trip(_chat(job).bind_tools(_tools(job)), job)
    return Observation(text=_text(second), tool_calls=_calls(first))


def _structured(job: Job) -> Observation:
    result = _chat(job).with_structured_output(pydantic_model(job), method="json_schema").invoke(job.prompt)
    return Observation(parsed=result.model_dump() if result is not None else None)


SCENARIOS = {"tool-round-trip": _tool_round_trip, "structured-output": _structured}


def scenario(job: Job) -> Observation:
    run = SCENARIOS.get(job.scenario.id)
    if run is None:
        run = _stream if job.scenario.stream else _invoke
    return run(job)


DRIVER = PythonDriver(
    id="langchain-anthropic",
    packages=("langchain-anthropic", "langchain-core", "anthropic"),
    module="langchain_anthropic",
    scenario=scenario,
    classify=classify_anthropic,
)
