"""The Python clients, in report order."""

from __future__ import annotations

from harness.clients.drivers import (
    anthropic_python,
    langchain_anthropic,
    langchain_python,
    openai_agents,
    openai_python,
    openai_responses,
    pydantic_ai,
    responses_socket,
)
from harness.clients.drivers.base import PythonDriver

PYTHON_CLIENTS: tuple[PythonDriver, ...] = (
    openai_python.DRIVER,
    langchain_python.DRIVER,
    openai_agents.DRIVER,
    pydantic_ai.DRIVER,
    anthropic_python.DRIVER,
    langchain_anthropic.DRIVER,
    openai_responses.DRIVER,
    openai_agents.DRIVER_RESPONSES,
    responses_socket.DRIVER,
    responses_socket.DRIVER_AGENTS,
)
