"""Client scenarios as data (specs/clients/scenarios.yaml): the request half and provider script of a rule,
and what the library must return or raise. Parsing is pure; `load_scenarios` reads the file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import ScenarioError

EXPECT_KEYS = frozenset(
    {"text", "tool_calls", "tool_result_ids", "parsed", "usage", "error", "upstream_calls", "provider_status"}
)
ERROR_KINDS = frozenset({"rate_limit", "authentication", "api_error", "any"})
FIELD_TYPES = frozenset({"string", "integer", "number", "boolean"})


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class NotApplicable:
    section: str
    quote: str


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    prompt: str
    upstream: Mapping[str, Any]
    expect: Mapping[str, Any]
    stream: bool = False
    include_usage: bool = False
    tools: tuple[Tool, ...] = ()
    tool_result: str | None = None
    object_name: str | None = None
    object_fields: Mapping[str, str] = field(default_factory=dict)
    retries: int = 0
    wrong_key: bool = False
    not_applicable: Mapping[str, NotApplicable] = field(default_factory=dict)


@dataclass(frozen=True)
class ProfileUse:
    """Which model role the clients use in a profile, and the provider family that serves it."""

    role: str
    family: str
    # The reference gateway profile an embedded run starts for it (a catalog such as `anthropic` is served by a
    # documented profile, harness/orchestrate/embedded_catalog.py); None: the profile's own name.
    gateway: str | None = None


@dataclass(frozen=True)
class ScenarioCatalog:
    scenarios: tuple[Scenario, ...]
    profiles: Mapping[str, ProfileUse]

    def scenario(self, scenario_id: str) -> Scenario:
        return next(s for s in self.scenarios if s.id == scenario_id)


def _tool(name: str, raw: Any) -> Tool:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("parameters"), Mapping):
        raise ScenarioError(f"tool {name!r}: needs description and parameters (a JSON schema)")
    return Tool(name=name, description=str(raw.get("description") or ""), parameters=dict(raw["parameters"]))


def _scenario(raw: Any, tools: Mapping[str, Tool], objects: Mapping[str, Mapping[str, str]]) -> Scenario:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
        raise ScenarioError(f"a scenario needs an id: {raw!r}")
    sid = raw["id"]
    expect = raw.get("expect")
    if not isinstance(expect, Mapping) or not expect:
        raise ScenarioError(f"scenario {sid}: expect must name what the library returns or raises")
    unknown = set(expect) - EXPECT_KEYS
    if unknown:
        raise ScenarioError(f"scenario {sid}: unknown expect keys {sorted(unknown)}")
    error = expect.get("error")
    if error is not None and (not isinstance(error, Mapping) or error.get("kind") not in ERROR_KINDS):
        raise ScenarioError(f"scenario {sid}: expect.error.kind must be one of {sorted(ERROR_KINDS)}")
    names = list(raw.get("tools") or [])
    missing = [n for n in names if n not in tools]
    if missing:
        raise ScenarioError(f"scenario {sid}: unknown tools {missing}")
    obj = raw.get("object")
    if obj is not None and obj not in objects:
        raise ScenarioError(f"scenario {sid}: unknown object {obj!r}")
    na = {
        str(p): NotApplicable(section=str(v["section"]), quote=str(v["quote"]))
        for p, v in (raw.get("not_applicable") or {}).items()
    }
    return Scenario(
        id=sid,
        title=str(raw.get("title") or sid),
        prompt=str(raw.get("prompt") or ""),
        upstream=dict(raw.get("upstream") or {}),
        expect=dict(expect),
        stream=bool(raw.get("stream", False)),
        include_usage=bool(raw.get("include_usage", False)),
        tools=tuple(tools[n] for n in names),
        tool_result=raw.get("tool_result"),
        object_name=obj,
        object_fields=dict(objects[obj]) if obj else {},
        retries=int(raw.get("retries", 0)),
        wrong_key=raw.get("key") == "wrong",
        not_applicable=na,
    )


def parse_catalog(data: Any) -> ScenarioCatalog:
    if not isinstance(data, Mapping) or not isinstance(data.get("scenarios"), list):
        raise ScenarioError("scenarios file: expected a mapping with a `scenarios` list")
    tools = {str(n): _tool(str(n), t) for n, t in (data.get("tools") or {}).items()}
    objects: dict[str, dict[str, str]] = {}
    for name, fields in (data.get("objects") or {}).items():
        bad = [f for f, t in fields.items() if t not in FIELD_TYPES]
        if bad:
            raise ScenarioError(f"object {name}: fields {bad} need a type among {sorted(FIELD_TYPES)}")
        objects[str(name)] = {str(f): str(t) for f, t in fields.items()}
    scenarios = tuple(_scenario(s, tools, objects) for s in data["scenarios"])
    ids = [s.id for s in scenarios]
    if len(set(ids)) != len(ids):
        raise ScenarioError("scenario ids must be unique")
    profiles = {
        str(p): ProfileUse(role=str(v["role"]), family=str(v["family"]), gateway=v.get("gateway"))
        for p, v in (data.get("profiles") or {}).items()
    }
    return ScenarioCatalog(scenarios=scenarios, profiles=profiles)


def load_scenarios(path: Path | None = None) -> ScenarioCatalog:
    import yaml

    from harness.paths import specs_root

    source = path or specs_root() / "clients" / "scenarios.yaml"
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"{source}: cannot read: {exc}") from exc
    return parse_catalog(data)
