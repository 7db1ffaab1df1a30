"""Read and validate rule files and profiles. Every problem is a SpecError naming file, line and problem."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from harness.errors import SpecError
from harness.paths import cache_dir, schema_path, specs_dir
from harness.spec.model import (
    UPSTREAM_SIDE_EXPECTATIONS,
    Needs,
    Profile,
    RoleSpec,
    Rule,
    RuleFile,
    Source,
    placeholders_in,
)


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    # Package data, checked against its metaschema by the test suite (test_shipped_json_schemas_are_valid):
    # checking it again in every run costs a quarter of a second per schema.
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)  # type: ignore[no-any-return]


def _validate_once(name: str, text: str, data: Any, node: yaml.Node | None, schema: str) -> None:
    """_validate, skipped for a file this user's cache has seen pass against the same schema with the same
    jsonschema: the check is a pure function of the three, and with the rule schema's dynamic references it
    is most of the second each run spends loading a catalog. Failures are never cached (they are raised)."""
    key = hashlib.sha256(
        b"\0".join((_schema_bytes(schema), jsonschema_version().encode(), text.encode("utf-8")))
    ).hexdigest()
    stamp = cache_dir("checked-rules") / key
    if stamp.is_file():
        return
    _validate(name, data, node, schema)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:  # a read-only home: validate every time
        pass


@cache
def _schema_bytes(name: str) -> bytes:
    return schema_path(name).read_bytes()


@cache
def jsonschema_version() -> str:
    from importlib.metadata import version

    return version("jsonschema")


def _node_at(node: yaml.Node, path: Sequence[Any]) -> yaml.Node:
    """The deepest YAML node along a JSON path, for its line number."""
    for step in path:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == step:
                    node = value_node
                    break
            else:
                return node
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            return node
    return node


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(str(path), 0, f"cannot read file: {exc}") from exc


def _parse(path: Path, text: str | None = None) -> tuple[Any, yaml.Node | None]:
    name = str(path)
    if text is None:
        text = _read(path)
    # One parse, in libyaml when PyYAML has it (pure Python is ~10x slower, and a catalog is thousands of lines
    # read by every run): the node tree for line numbers, the data constructed from that same tree.
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(name, line, f"invalid YAML: {problem}") from exc
    finally:
        loader.dispose()
    return data, node


def _best_error(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    return jsonschema.exceptions.best_match(errors) or errors[0]


def _validate(name: str, data: Any, node: yaml.Node | None, schema: str) -> None:
    errors = list(_validator(schema).iter_errors(data))
    if not errors:
        return
    err = _best_error(errors)
    path = list(err.absolute_path)
    if err.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(err.instance, dict):
        # Point at the unexpected key itself, not at the mapping that holds it.
        extra = [k for k in err.instance if f"'{k}'" in err.message]
        if extra:
            path.append(extra[0])
    line = _node_at(node, path).start_mark.line + 1 if node is not None else 0
    where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
    raise SpecError(name, line, f"at {where}: {err.message}")


def validate_document(name: str, data: Any, schema: str) -> None:
    """`data` (read elsewhere, e.g. an implementation file) against specs/schema/<schema>.schema.json: a SpecError
    (a ConfigError) naming where and what for the first problem."""
    _validate(name, data, None, schema)


def _line_of(node: yaml.Node | None, path: Sequence[Any]) -> int:
    return _node_at(node, path).start_mark.line + 1 if node is not None else 0


def _needs(raw: Mapping[str, Any], rule: Mapping[str, Any]) -> Needs:
    expect_keys = set(rule["expect"])
    for override in (*rule.get("when", ()), *rule.get("then", ())):
        expect_keys |= set(override["expect"])
    default_replay = "upstream" in rule or bool(expect_keys & UPSTREAM_SIDE_EXPECTATIONS)
    models = set(raw.get("models", ())) | set(placeholders_in(rule["request"]))
    return Needs(
        replay=bool(raw.get("replay", default_replay)),
        models=frozenset(models),
        features=frozenset(raw.get("features", ())),
        without=frozenset(raw.get("without", ())),
        harness=frozenset(raw.get("harness", ())),
    )


def _capabilities_used(rule: Mapping[str, Any]) -> set[str]:
    """The HARNESS_CAPABILITIES a rule's data uses, which it must also declare in `needs.harness`."""
    used = {"then"} if rule.get("then") else set()
    expects = [
        rule["expect"],
        *(w["expect"] for w in rule.get("when", ())),
        *(t["expect"] for t in rule.get("then", ())),
    ]
    if any("upstream_path" in e for e in expects):
        used.add("upstream_path")
    if "${data_url:" in json.dumps(rule["request"]):
        used.add("data_url")
    requests = [rule["request"], *((t.get("request") or {}) for t in rule.get("then", ()))]
    if any(r.get("transport", "http") != "http" for r in requests):
        used.add("websocket")
    return used


def load_rule_file(path: str | Path) -> RuleFile:
    """Parse, schema-check and freeze one rule file.

    A run reads each file more than once (the selection check, the collection, coverage): the result is kept
    per path and content, so an edited file is read afresh and an unchanged one is not parsed again.
    """
    path = Path(path)
    return _load_rule_file(str(path), _read(path))


@lru_cache(maxsize=512)
def _load_rule_file(name: str, text: str) -> RuleFile:
    path = Path(name)
    data, node = _parse(path, text)
    if data is None:
        raise SpecError(name, 1, "empty rule file")
    _validate_once(name, text, data, node, "rule")
    defaults = data.get("defaults", {})
    file_source = data["source"]
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(data["rules"]):
        line = _line_of(node, ["rules", index])
        merged = {**defaults, **raw}
        rule_id = merged["id"]
        if rule_id in seen:
            raise SpecError(name, line, f"duplicate rule id {rule_id!r} (first at line {seen[rule_id]})")
        seen[rule_id] = line
        undeclared = sorted(_capabilities_used(merged) - set(merged.get("needs", {}).get("harness", ())))
        if undeclared:
            raise SpecError(
                name, line, f"rule {rule_id!r} uses {', '.join(undeclared)}: declare it in needs.harness"
            )
        src = merged["source"]
        doc = src.get("doc", file_source["doc"])
        # Rules live under specs/<profile>/; the id's first segment is that profile.
        if not rule_id.startswith(path.parent.name + "/") and (path.parent / "profile.yaml").is_file():
            raise SpecError(name, line, f"rule id {rule_id!r} must start with {path.parent.name + '/'!r}")
        rules.append(
            Rule(
                id=rule_id,
                aliases=tuple(merged.get("aliases", ())),
                level=merged["level"],
                title=merged["title"],
                source=Source(
                    doc=doc, section=src.get("section", file_source["section"]), quote=src["quote"]
                ),
                reading=merged.get("reading"),
                tags=frozenset(merged.get("tags", ())),
                request=merged["request"],
                variants=tuple((k, tuple(v)) for k, v in merged.get("variants", {}).items()),
                upstream=merged.get("upstream"),
                needs=_needs(merged.get("needs", {}), merged),
                expect=merged["expect"],
                when=tuple(merged.get("when", ())),
                then=tuple(merged.get("then", ())),
                live=merged.get("live"),
                file=name,
                line=line,
            )
        )
    return RuleFile(path=name, rules=tuple(rules))


def load_profile(profile: str, root: Path | None = None) -> Profile:
    """specs/<profile>/profile.yaml, validated."""
    path = (root or specs_dir()) / profile / "profile.yaml"
    if not path.is_file():
        known = ", ".join(sorted(available_profiles(root))) or "none"
        raise SpecError(str(path), 0, f"unknown profile {profile!r} (known: {known})")
    data, node = _parse(path)
    _validate(str(path), data, node, "profile")
    return Profile(
        name=data["profile"],
        doc=data["doc"],
        title=data["title"],
        base_path=data.get("base_path"),
        models={
            k: RoleSpec(v["default"], v["description"], v.get("upstream")) for k, v in data["models"].items()
        },
        features=dict(data.get("features", {})),
        surface=data.get("surface", "chat-completions"),
    )


def available_profiles(root: Path | None = None) -> list[str]:
    base = root or specs_dir()
    return sorted(p.parent.name for p in base.glob("*/profile.yaml"))
