"""What every driver shares: the interface, the application's messages and tools in OpenAI shape, the
typed object as a pydantic model, and the mapping of the openai SDK's exceptions (most Python frameworks
raise them through)."""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.clients.observation import Job, Observation, Raised

# Seconds the openai SDK waits on the gateway in every Python driver: a hang is the scenario's failure.
CLIENT_TIMEOUT = 20.0


def openai_options(job: Job) -> dict[str, Any]:
    """The options every Python driver gives the openai SDK's client (sync or async): the gateway, its key,
    the scenario's retries and the common timeout."""
    return {
        "base_url": job.base_url,
        "api_key": job.key,
        "max_retries": job.scenario.retries,
        "timeout": CLIENT_TIMEOUT,
        "default_headers": dict(job.headers) or None,
    }


def run_closing(run: Callable[[Job], Awaitable[Observation]], job: Job, clients: list[Any]) -> Observation:
    """One async scenario on its own event loop; the AsyncOpenAI clients it opened (`clients`) are closed
    before that loop ends."""

    async def closing() -> Observation:
        try:
            return await run(job)
        finally:
            while clients:
                await clients.pop().close()

    return asyncio.run(closing())


class Driver(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def language(self) -> str:
        """`python` or `node`."""
        ...

    def versions(self) -> dict[str, str]:
        """The pinned library versions in use (what the report records)."""
        ...

    def missing(self) -> str | None:
        """Why this client cannot run here (not installed, no Node), or None."""
        ...

    def run_all(self, jobs: Sequence[Job]) -> list[Observation]:
        """Each job's observation, in order; a library exception becomes an observation's `error`."""
        ...


def installed_versions(packages: Sequence[str]) -> dict[str, str]:
    out = {}
    for name in packages:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


@dataclass(frozen=True)
class PythonDriver:
    """A Python client: `scenario` drives one job through the library; `classify` names what it raised."""

    id: str
    packages: tuple[str, ...]  # distributions whose versions the report records; the first must import
    module: str  # imported to know the client is installed
    scenario: Callable[[Job], Observation]
    classify: Callable[[BaseException], Raised]
    language: str = "python"
    # Scenarios the library cannot be asked to do, with why (the runner marks them NOT_APPLICABLE for it).
    unsupported: Mapping[str, str] = field(default_factory=dict)

    def cannot(self, scenario: str) -> str | None:
        return self.unsupported.get(scenario)

    def versions(self) -> dict[str, str]:
        return installed_versions(self.packages)

    def missing(self) -> str | None:
        import importlib.util

        if importlib.util.find_spec(self.module.split(".")[0]) is None:
            return f"{self.id}: {self.module} is not installed (pip install -e '.[clients]')"
        try:
            importlib.import_module(self.module)
        except Exception as exc:  # an import that fails is this client not being usable here, with why
            return f"{self.id}: import {self.module} failed: {type(exc).__name__}: {exc}"
        return None

    def run_all(self, jobs: Sequence[Job]) -> list[Observation]:
        out = []
        for job in jobs:
            try:
                out.append(self.scenario(job))
            except Exception as exc:  # the library raised: that is the observation
                out.append(Observation(error=self.classify(exc)))
        return out


def messages(job: Job) -> list[Any]:
    return [{"role": "user", "content": job.prompt}]


def openai_tools(job: Job) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
        }
        for t in job.scenario.tools
    ]


_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def pydantic_model(job: Job) -> Any:
    """The scenario's typed object as a pydantic model, closed (extra forbidden) as strict schemas need."""
    from pydantic import ConfigDict, create_model

    fields: dict[str, Any] = {
        name: (_PY_TYPES[kind], ...) for name, kind in job.scenario.object_fields.items()
    }
    return create_model(job.scenario.object_name or "Answer", __config__=ConfigDict(extra="forbid"), **fields)


def raised(kind: str, exc: BaseException, status: int | None) -> Raised:
    cls = type(exc)
    message = str(exc).replace("\n", " ")[:500]
    return Raised(
        kind=kind, cls=f"{cls.__module__.split('.')[0]}.{cls.__qualname__}", status=status, message=message
    )


def classify_sdk(exc: BaseException, sdk: Any) -> Raised:
    """An official SDK's exception hierarchy (openai's and anthropic's share its names), as the harness names it,
    found through __cause__ when a framework wraps it."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, sdk.RateLimitError):
            return raised("rate_limit", exc, seen.status_code)
        if isinstance(seen, sdk.AuthenticationError):
            return raised("authentication", exc, seen.status_code)
        if isinstance(seen, sdk.APIStatusError):
            return raised("api_error", exc, seen.status_code)
        if isinstance(seen, sdk.APIConnectionError):
            return raised("connection", exc, None)
        if isinstance(seen, sdk.APIError):
            return raised("api_error", exc, None)
        seen = seen.__cause__ or seen.__context__
    return raised("other", exc, None)


def classify_openai(exc: BaseException) -> Raised:
    import openai

    return classify_sdk(exc, openai)


def langchain_tool_round_trip(chat: Any, job: Job) -> tuple[Any, Any]:
    """A LangChain chat model (tools bound): the first answer's tool calls answered with ToolMessages carrying
    their ids, then the second answer; (first, second)."""
    from langchain_core.messages import HumanMessage, ToolMessage

    convo: list[Any] = [HumanMessage(job.prompt)]
    first = chat.invoke(convo)
    convo.append(first)
    for call in first.tool_calls:
        convo.append(ToolMessage(content=job.scenario.tool_result or "", tool_call_id=call["id"]))
    return first, chat.invoke(convo)
