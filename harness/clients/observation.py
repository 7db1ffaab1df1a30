"""What a driver hands the judge: the job it ran (gateway, model, prompt, scenario) and what the library
returned or raised, in library-neutral terms. Pure data."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.clients.scenarios import Scenario

# How the harness classifies what a library raised; each driver maps its library's own classes onto these.
ErrorKind = str  # "rate_limit" | "authentication" | "api_error" | "connection" | "other"


@dataclass(frozen=True)
class Job:
    scenario: Scenario
    base_url: str
    key: str
    model: str
    prompt: str  # the case marker, a space, the scenario's prompt
    headers: Mapping[str, str] = field(
        default_factory=dict
    )  # sent on every request (a gateway's routing headers)

    def as_json(self) -> dict[str, Any]:
        """What the Node driver script reads: everything a driver needs, as plain JSON."""
        s = self.scenario
        return {
            "scenario": s.id,
            "base_url": self.base_url,
            "key": self.key,
            "model": self.model,
            "prompt": self.prompt,
            "headers": dict(self.headers),
            "stream": s.stream,
            "include_usage": s.include_usage,
            "retries": s.retries,
            "tools": [
                {"name": t.name, "description": t.description, "parameters": t.parameters} for t in s.tools
            ],
            "tool_result": s.tool_result,
            "object": {"name": s.object_name, "fields": dict(s.object_fields)} if s.object_name else None,
        }


@dataclass(frozen=True)
class ToolCall:
    id: str | None
    name: str
    arguments: Any  # parsed JSON when it parses, else the raw string


@dataclass(frozen=True)
class Raised:
    kind: ErrorKind
    cls: str  # the library's exception class, qualified (`openai.RateLimitError`)
    status: int | None
    message: str


@dataclass(frozen=True)
class Observation:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    parsed: Mapping[str, Any] | None = None
    usage: Mapping[str, Any] | None = None
    error: Raised | None = None
    notes: tuple[str, ...] = field(default=())  # what else the driver saw (raw response status, API used)

    def as_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "parsed": dict(self.parsed) if self.parsed is not None else None,
            "usage": dict(self.usage) if self.usage is not None else None,
            "error": None
            if self.error is None
            else {
                "kind": self.error.kind,
                "class": self.error.cls,
                "status": self.error.status,
                "message": self.error.message,
            },
            "notes": list(self.notes),
        }


def arguments(raw: Any) -> Any:
    """A tool call's arguments as the library gave them: parsed when a JSON string, as is otherwise."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def observation_from_json(data: Mapping[str, Any]) -> Observation:
    """An observation a driver script printed (the Node drivers)."""
    err = data.get("error")
    return Observation(
        text=data.get("text"),
        tool_calls=tuple(
            ToolCall(id=c.get("id"), name=str(c.get("name")), arguments=arguments(c.get("arguments")))
            for c in data.get("tool_calls") or []
        ),
        parsed=data.get("parsed"),
        usage=data.get("usage"),
        error=None
        if not err
        else Raised(
            kind=str(err.get("kind") or "other"),
            cls=str(err.get("class") or "?"),
            status=err.get("status") if isinstance(err.get("status"), int) else None,
            message=str(err.get("message") or "")[:500],
        ),
        notes=tuple(str(n) for n in data.get("notes") or []),
    )
