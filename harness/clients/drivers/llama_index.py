"""llama-index: OpenAILike (llama-index-llms-openai-like) pointed at the gateway — chat, stream_chat,
chat_with_tools / stream_chat_with_tools with get_tool_calls_from_response, and structured_predict for the
typed object (should_use_structured_outputs: response_format json_schema). It raises the openai SDK's exceptions through."""

from __future__ import annotations

from typing import Any

from harness.clients.drivers.base import CLIENT_TIMEOUT, PythonDriver, classify_openai, pydantic_model
from harness.clients.observation import Job, Observation, ToolCall

TIMEOUT = CLIENT_TIMEOUT
_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _llm(job: Job, **extra: Any) -> Any:
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(
        model=job.model, api_base=job.base_url, api_key=job.key, is_chat_model=True,
        default_headers=dict(job.headers) or None,
        is_function_calling_model=True, max_retries=job.scenario.retries, timeout=TIMEOUT, **extra,
    )  # fmt: skip


def _tools(job: Job) -> list[Any]:
    from llama_index.core.tools import FunctionTool
    from pydantic import create_model

    result = job.scenario.tool_result or "{}"

    def answer(**_: Any) -> str:
        return result

    out = []
    for t in job.scenario.tools:
        props = t.parameters.get("properties", {})
        schema = create_model(t.name, **{k: (_TYPES.get(v.get("type"), str), ...) for k, v in props.items()})  # type: ignore[call-overload]
        out.append(
            FunctionTool.from_defaults(fn=answer, name=t.name, description=t.description, fn_schema=schema)
        )
    return out


def _calls(llm: Any, response: Any) -> tuple[ToolCall, ...]:
    found = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
    return tuple(ToolCall(id=c.tool_id, name=c.tool_name, arguments=c.tool_kwargs) for c in found)


def scenario(job: Job) -> Observation:
    from llama_index.core.llms import ChatMessage

    s = job.scenario
    user = [ChatMessage(role="user", content=job.prompt)]
    if s.object_name:
        from llama_index.core.prompts import PromptTemplate

        # should_use_structured_outputs: response_format json_schema (OpenAILike's default is a forced tool).
        out = _llm(job, should_use_structured_outputs=True).structured_predict(
            pydantic_model(job), PromptTemplate(job.prompt.replace("{", "{{").replace("}", "}}"))
        )
        return Observation(parsed=out.model_dump(), notes=("structured_predict",))
    if s.tools and s.stream:
        llm = _llm(job)
        last = None
        for response in llm.stream_chat_with_tools(_tools(job), user_msg=job.prompt):
            last = response  # each response holds everything streamed so far
        return Observation(tool_calls=_calls(llm, last) if last is not None else ())
    if s.tools:
        llm, tools = _llm(job), _tools(job)
        first = llm.chat_with_tools(tools, user_msg=job.prompt)
        calls = _calls(llm, first)
        convo = [*user, first.message]
        convo += [ChatMessage(role="tool", content=s.tool_result or "", additional_kwargs={"tool_call_id": c.id, "name": c.name})
                  for c in calls]  # fmt: skip
        second = llm.chat_with_tools(tools, chat_history=convo)
        return Observation(text=second.message.content, tool_calls=calls)
    if s.stream:
        extra = {"additional_kwargs": {"stream_options": {"include_usage": True}}} if s.include_usage else {}
        text, usage = "", None
        for r in _llm(job, **extra).stream_chat(user):
            text += r.delta or ""
            raw_usage = getattr(r.raw, "usage", None) if r.raw is not None else None
            if raw_usage is not None:
                usage = {"prompt_tokens": raw_usage.prompt_tokens, "completion_tokens": raw_usage.completion_tokens,
                         "total_tokens": raw_usage.total_tokens}  # fmt: skip
        return Observation(text=text, usage=usage)
    return Observation(text=_llm(job).chat(user).message.content)


DRIVER = PythonDriver(
    id="llama-index", packages=("llama-index-llms-openai-like",), module="llama_index.llms.openai_like",
    scenario=scenario, classify=classify_openai,
)  # fmt: skip
