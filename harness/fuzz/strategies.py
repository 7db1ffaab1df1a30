"""Hypothesis strategies for hostile Chat Completions requests: well-formed bodies from the request schema
(`specs/schema/wire/openai.chat.completion.request`), then broken on purpose — wrong types for every field,
nesting, lone surrogates, non-finite numbers, huge strings, wrong content types, truncated bodies.

Each example is a `Case`: the raw bytes sent, the content type, and whether the profile's doc says the gateway
refuses it (then it must not reach the upstream at all).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from harness.paths import schema_path

REQUEST_SCHEMA = "openai.chat.completion.request"
_HOLE = "__gc_fuzz_hole__"


@dataclass(frozen=True)
class Case:
    kind: str  # which generator made it: schema, wrong-type, hostile, not-json, content-type, refused-field
    body: bytes
    content_type: str | None = "application/json"
    refused: bool = False  # the profile's doc says this body is refused before any upstream call
    note: str = ""  # what was done to it (a field name, a hostile shape)


@cache
def request_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_path(REQUEST_SCHEMA).read_text(encoding="utf-8"))
    return loaded


def _dumps(value: Any) -> bytes:
    # ensure_ascii: surrogate pairs that hypothesis generates travel as escapes, as a client's JSON library
    # would send them; the hostile shapes are spliced in as raw JSON text.
    return json.dumps(value).encode()


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
ANY_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)

_JSON_TYPE_OF = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _declared_types(field_schema: Mapping[str, Any]) -> set[str]:
    declared = field_schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return set(declared)
    return set()


def _wrong_for(field_schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    declared = _declared_types(field_schema)
    if not declared:
        return ANY_JSON
    return ANY_JSON.filter(lambda v: not any(_JSON_TYPE_OF[t](v) for t in declared))


def well_formed(models: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Bodies valid against the request schema, `model` mostly one the profile knows (else all are 404s)."""
    schema = request_schema()
    model = st.sampled_from(list(models)) if models else st.text(max_size=40)
    return st.tuples(from_schema(schema), model | st.text(max_size=40)).map(
        lambda pair: {**pair[0], "model": pair[1]}
    )


def _simple(models: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    model = st.sampled_from(list(models)) if models else st.just("model")
    text = st.text(max_size=30)
    return st.builds(
        lambda m, t, s: {
            "model": m,
            "messages": [{"role": "user", "content": t or "hi"}],
            **({"stream": True} if s else {}),
        },
        model,
        text,
        st.booleans(),
    )


def wrong_types(models: Sequence[str]) -> st.SearchStrategy[Case]:
    """Every schema field, one at a time, given a value of a type the schema does not allow."""
    properties: Mapping[str, Any] = request_schema()["properties"]
    fields = sorted(properties)

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        body = draw(_simple(models))
        field = draw(st.sampled_from(fields))
        body[field] = draw(_wrong_for(properties[field]))
        return Case("wrong-type", _dumps(body), note=field)

    return build()


# Hostile JSON text spliced in where a value goes (raw, because json.dumps cannot write most of these).
def _hostile_text() -> st.SearchStrategy[tuple[str, str]]:
    depth = st.integers(min_value=100, max_value=5000)
    return st.one_of(
        depth.map(lambda n: ("deep-array", "[" * n + "]" * n)),
        depth.map(lambda n: ("deep-object", '{"a":' * n + "1" + "}" * n)),
        st.sampled_from(["\\ud800", "\\udfff", "a\\ud83d", "\\udc00x", "\\ud800\\nINJECTED"]).map(
            lambda s: ("lone-surrogate", f'"{s}"')
        ),
        st.sampled_from(["1e999", "-1e999", "NaN", "Infinity", "-Infinity", "1" + "0" * 400, "9" * 5000]).map(
            lambda s: ("non-finite", s)
        ),
        st.integers(min_value=10_000, max_value=1_000_000).map(
            lambda n: ("huge-string", '"' + "x" * n + '"')
        ),
        st.sampled_from(['"\\u0000"', '"a\\r\\nb"', '"\\u2028"', '"\u00e9\u20ac\U0001f600"']).map(
            lambda s: ("control-characters", s)
        ),
    )


_HOSTILE_SPOTS = (
    "model",
    "content",
    "system",
    "stop",
    "temperature",
    "top_p",
    "max_tokens",
    "tool-name",
    "tool-schema",
    "response-format-schema",
    "metadata",
    "user",
    "image-url",
    "tool-call-arguments",
)


def _with_hole(spot: str, model: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        body["stream"] = True
    if spot == "model":
        body["model"] = _HOLE
    elif spot == "content":
        body["messages"][0]["content"] = _HOLE
    elif spot == "system":
        body["messages"].insert(0, {"role": "system", "content": _HOLE})
    elif spot == "tool-name":
        body["tools"] = [{"type": "function", "function": {"name": _HOLE, "parameters": {"type": "object"}}}]
    elif spot == "tool-schema":
        params = {"type": "object", "properties": {"a": {"type": "number", "maximum": _HOLE}}}
        body["tools"] = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    elif spot == "response-format-schema":
        schema = {"type": "object", "properties": {"a": {"default": _HOLE}}, "additionalProperties": False}
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    elif spot == "image-url":
        part = {"type": "image_url", "image_url": {"url": _HOLE}}
        body["messages"][0]["content"] = [{"type": "text", "text": "what is it?"}, part]
    elif spot == "tool-call-arguments":
        call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": _HOLE}}
        body["messages"] += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ]
    elif spot == "metadata":
        body["metadata"] = {"k": _HOLE}
    else:
        body[spot] = _HOLE
    return body


def hostile(models: Sequence[str]) -> st.SearchStrategy[Case]:
    """A small valid body with one hostile JSON value in one of the places a gateway reads or forwards."""
    model = st.sampled_from(list(models)) if models else st.just("model")

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        spot = draw(st.sampled_from(_HOSTILE_SPOTS))
        shape, text = draw(_hostile_text())
        body = _dumps(_with_hole(spot, draw(model), draw(st.booleans())))
        return Case(
            "hostile", body.replace(json.dumps(_HOLE).encode(), text.encode()), note=f"{shape} in {spot}"
        )

    return build()


def not_json(models: Sequence[str]) -> st.SearchStrategy[Case]:
    """Bodies both docs refuse as invalid JSON: truncated, garbage, or a top level that is not an object."""

    @st.composite
    def truncated(draw: st.DrawFn) -> Case:
        whole = _dumps(draw(_simple(models)))
        cut = draw(st.integers(min_value=0, max_value=len(whole) - 1))
        return Case("not-json", whole[:cut], refused=True, note=f"truncated at byte {cut}")

    garbage = (
        st.binary(max_size=64)
        .filter(_not_an_object)
        .map(lambda b: Case("not-json", b, refused=True, note="bytes"))
    )
    top_level = st.one_of(
        st.lists(ANY_JSON, max_size=3), st.text(max_size=10), st.integers(), st.none(), st.booleans()
    ).map(lambda v: Case("not-json", _dumps(v), refused=True, note="top level not an object"))
    return st.one_of(truncated(), garbage, top_level)


def _not_an_object(raw: bytes) -> bool:
    try:
        return not isinstance(json.loads(raw), dict)
    except ValueError:
        return True


_CONTENT_TYPES = (
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/xml",
    "text/html; charset=utf-8",
)


def content_types(models: Sequence[str], *, other_types_refused: bool) -> st.SearchStrategy[Case]:
    """A valid body under a content type other than JSON, or none at all."""
    kind = st.sampled_from(_CONTENT_TYPES) | st.text(
        st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=30
    ).filter(lambda t: t.split(";")[0].strip().lower() != "application/json")

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        body = _dumps(draw(_simple(models)))
        if draw(st.booleans()):
            return Case("content-type", body, content_type=None, note="no content-type")
        value = draw(kind)
        return Case("content-type", body, content_type=value, refused=other_types_refused, note=value)

    return build()


def refused_fields(
    models: Sequence[str], table: Mapping[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Case]:
    """A valid body plus one field the doc's refusal table names, with a value it refuses."""

    @st.composite
    def build(draw: st.DrawFn) -> Case:
        body = draw(_simple(models))
        field = draw(st.sampled_from(sorted(table)))
        body[field] = draw(table[field])
        return Case("refused-field", _dumps(body), refused=True, note=field)

    return build()


# EZAT "Ignored and refused fields": "Fields that would change the answer and have no equivalent are refused
# with `400` `invalid_request_error`" — the values of the table that are refused.
REFUSED_FIELDS: Mapping[str, Mapping[str, st.SearchStrategy[Any]]] = {
    "ezat": {
        "n": st.integers(min_value=2, max_value=128),
        "logprobs": st.just(True),
        "top_logprobs": st.integers(min_value=0, max_value=20),
        "logit_bias": st.dictionaries(
            st.text(min_size=1, max_size=6), st.integers(-100, 100), min_size=1, max_size=3
        ),
        "audio": st.just({"voice": "alloy", "format": "mp3"}),
        "modalities": st.sampled_from([["audio"], ["text", "audio"]]),
        "web_search_options": st.just({}),
        "functions": st.just([{"name": "f", "parameters": {"type": "object"}}]),
        "function_call": st.sampled_from(["auto", "none", {"name": "f"}]),
    },
}


def schema_cases(models: Sequence[str]) -> st.SearchStrategy[Case]:
    return well_formed(models).map(lambda body: Case("schema", _dumps(body)))
