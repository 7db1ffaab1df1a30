"""Hostile requests for a surface (Chat Completions, Messages, Responses: `bodies.py`), built from a stream of
integer choices: well-formed bodies from the surface's request schema (`specs/schema/wire/`, e.g.
`openai.chat.completion.request`), then broken on purpose — wrong types for every field, nesting, lone
surrogates, non-finite numbers, huge strings, wrong content types, truncated bodies.

Every generator reads its randomness from a `Source` and nothing else, so one generator serves two drivers:
- `RandomSource`: a seeded `random.Random` (microseconds per example; the fuzz's hot path), which records the
  choices it made (its tape);
- `DrawSource`: hypothesis draws (`st.integers(lo, hi)` per choice), so hypothesis can replay a failing tape and
  shrink it with its own shrinker. Choices are laid out so that smaller is simpler (index 0 is the plainest
  option, an optional field is absent at 0, a length is shorter), which is the direction hypothesis shrinks.

Each example is a `Case`: the raw bytes sent, the content type, and whether the profile's doc says the gateway
refuses it (then it must not reach the upstream at all).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.fuzz.bodies import BODIES, HOLE, Bodies, load_schema

REQUEST_SCHEMA = "openai.chat.completion.request"
CHAT = BODIES["chat-completions"]


@dataclass(frozen=True)
class Case:
    kind: str  # which generator made it: schema, wrong-type, hostile, not-json, content-type, refused-field
    body: bytes
    content_type: str | None = "application/json"
    refused: bool = False  # the profile's doc says this body is refused before any upstream call
    note: str = ""  # what was done to it (a field name, a hostile shape)


# --------------------------------------------------------------------------------------- the choice sources


class Source(Protocol):
    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi]; `lo` is the simplest."""
        ...


class RandomSource:
    """Choices from a seeded `random.Random`, each recorded in `tape` (hypothesis can replay the tape)."""

    def __init__(self, seed: int | str) -> None:
        self._random = random.Random(seed)
        self._uniform = self._random.random
        self.tape: list[int] = []

    def integer(self, lo: int, hi: int) -> int:
        span = hi - lo + 1
        # random() scaled is ~3x cheaper than randint; exact enough below 2**48 (then randrange)
        value = lo + int(self._uniform() * span) if span < 2**48 else self._random.randrange(lo, hi + 1)
        self.tape.append(value)
        return value


class DrawSource:
    """Choices drawn by hypothesis inside a `@composite` (one `st.integers(lo, hi)` per choice)."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        from hypothesis import strategies as st

        self._draw = draw
        self._integers = st.integers

    def integer(self, lo: int, hi: int) -> int:
        return int(self._draw(self._integers(lo, hi)))


def pick(src: Source, options: Sequence[Any]) -> Any:
    return options[src.integer(0, len(options) - 1)]


def chance(src: Source, percent: int) -> bool:
    """True `percent` times in 100; False is the simpler (a choice of 0)."""
    return src.integer(0, 99) >= 100 - percent


def number_in(src: Source, lo: int, hi: int) -> int:
    """An integer in [lo, hi], biased to the low end and the bounds (as hypothesis's integers are)."""
    scale = src.integer(0, 3)
    if scale == 0:
        return src.integer(lo, min(hi, lo + 3))
    if scale == 1:
        return src.integer(lo, min(hi, lo + 255))
    if scale == 2:
        return int(pick(src, (lo, hi, hi - 1 if hi > lo else hi)))
    return src.integer(lo, hi)


def real_in(src: Source, lo: float, hi: float) -> float:
    """A finite float in [lo, hi]: a bound, a whole number or any value in between."""
    form = src.integer(0, 3)
    if form == 0:
        return float(lo) if lo > 0 or hi < 0 else 0.0
    if form == 1:
        return float(pick(src, (lo, hi)))
    if form == 2:
        return float(src.integer(int(lo), int(hi))) if hi - lo >= 1 else float(lo)
    return lo + (hi - lo) * src.integer(0, 2**53) / 2**53


_PRINTABLE = (
    "a0 bcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ123456789.,;:!?-_'\"\\/(){}[]<>@#$%^&*+=~`|"
)
_SPECIAL = "\x00\t\n\r\x1b\x7f\u00e9\u00a0\u0301\u200b\u2028\u2029\ufeff\ufffd\u4e2d\U0001f600\U0010ffff"


def text(src: Source, max_size: int = 20, alphabet: str | None = None) -> str:
    """A string: mostly printable ASCII, sometimes a control, combining, wide or astral character, sometimes any
    code point (but a surrogate, which a JSON library cannot encode from a `str`)."""
    size = src.integer(0, src.integer(0, max_size))  # short strings mostly, as hypothesis's are
    if alphabet is not None:
        return "".join(alphabet[src.integer(0, len(alphabet) - 1)] for _ in range(size))
    chars = []
    for _ in range(size):
        i = src.integer(0, len(_PRINTABLE) + len(_SPECIAL))
        if i < len(_PRINTABLE):
            chars.append(_PRINTABLE[i])
        elif i < len(_PRINTABLE) + len(_SPECIAL):
            chars.append(_SPECIAL[i - len(_PRINTABLE)])
        else:
            point = src.integer(0x80, 0x10FFFF - 0x800)
            chars.append(chr(point + 0x800 if point >= 0xD800 else point))
    return "".join(chars)


# The JSON types, in the order a value shrinks through them.
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def json_of(src: Source, kind: str, depth: int = 0) -> Any:
    """A JSON value of one JSON type ("number" here: a float that is not a whole number)."""
    if kind == "null":
        return None
    if kind == "boolean":
        return src.integer(0, 1) == 1
    if kind == "integer":
        return pick(src, (1, -1)) * number_in(src, 0, 2**64)
    if kind == "number":
        return math.floor(real_in(src, -1e12, 1e12)) + 0.5
    if kind == "string":
        return text(src)
    if kind == "array":
        return [any_json(src, depth + 1) for _ in range(src.integer(0, 3))]
    return {text(src, 8): any_json(src, depth + 1) for _ in range(src.integer(0, 3))}


def any_json(src: Source, depth: int = 0) -> Any:
    """Any small JSON value (at most three levels deep)."""
    kinds = JSON_TYPES if depth < 3 else JSON_TYPES[:5]
    return json_of(src, pick(src, kinds), depth)


_JSON_TYPE_OF: Mapping[str, Callable[[Any], bool]] = {
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


def wrong_value(src: Source, field_schema: Mapping[str, Any]) -> Any:
    """A JSON value of a type the field's schema does not allow (any value where the schema names no type)."""
    declared = _declared_types(field_schema)
    if not declared:
        return any_json(src)
    allowed = [t for t in JSON_TYPES if not any(_JSON_TYPE_OF[d](_SAMPLE[t]) for d in declared)]
    return json_of(src, pick(src, allowed))


# One value of each kind `json_of` makes, to tell which kinds a declared type accepts ("number" accepts integers;
# `json_of`'s "number" is never whole, so "integer" does not accept it).
_SAMPLE: Mapping[str, Any] = {
    "null": None,
    "boolean": True,
    "integer": 1,
    "number": 1.5,
    "string": "",
    "array": [],
    "object": {},
}


# --------------------------------------------------------------------------------------- schema-valid bodies


def request_schema(name: str = REQUEST_SCHEMA) -> dict[str, Any]:
    return load_schema(name)


_PATTERN = re.compile(r"^\^\[([^\]]+)\]\{(\d+),(\d+)\}\$$")
_KNOWN = {"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems"}
_KNOWN |= {"minimum", "maximum", "enum", "const", "oneOf", "$ref", "pattern", "description", "title"}
_KNOWN |= {"$schema", "$id", "$defs"}


def _charset(spec: str) -> str:
    chars, i = [], 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            chars += [chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1)]
            i += 3
        else:
            chars.append(spec[i])
            i += 1
    return "".join(chars)


def from_schema(src: Source, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """A value valid against `schema`, for the keywords the request schema uses (an unknown keyword raises, so a
    schema edit cannot silently make the generated bodies invalid). `oneOf` branches must be disjoint, as the
    request schema's are (distinct roles, types or consts)."""
    unknown = set(schema) - _KNOWN
    if unknown:
        raise NotImplementedError(f"the fuzz's schema walker does not know {sorted(unknown)}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return from_schema(src, root["$defs"][name], root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return pick(src, schema["enum"])
    if "oneOf" in schema:
        return from_schema(src, pick(src, schema["oneOf"]), root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = pick(src, kind)
    if kind == "object":
        return _object(src, schema, root)
    if kind == "array":
        low, high = schema.get("minItems", 0), schema.get("maxItems", 4)
        return [from_schema(src, schema.get("items", {}), root) for _ in range(src.integer(low, high))]
    if kind == "string":
        found = _PATTERN.match(schema.get("pattern", "")) if "pattern" in schema else None
        if "pattern" in schema and found is None:
            raise NotImplementedError(f"the fuzz's schema walker reads no pattern like {schema['pattern']!r}")
        if found is not None:
            alphabet, low, high = _charset(found[1]), int(found[2]), int(found[3])
            return "".join(pick(src, alphabet) for _ in range(src.integer(low, high)))
        return text(src)
    if kind == "integer":
        if "minimum" in schema:
            low = schema["minimum"]
            return number_in(src, low, schema.get("maximum", low + 2**63))
        return pick(src, (1, -1)) * number_in(src, 0, schema.get("maximum", 2**63))
    if kind == "number":
        return real_in(src, schema.get("minimum", -1e9), schema.get("maximum", 1e9))
    if kind == "boolean":
        return src.integer(0, 1) == 1
    return None


def _object(src: Source, schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    value: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in required or chance(src, 25):
            value[name] = from_schema(src, sub, root)
    extra = schema.get("additionalProperties", True)
    if extra is not False and chance(src, 10 if properties else 60):
        for _ in range(src.integer(1, 3)):
            key = text(src, 8)
            if key not in properties:
                value[key] = any_json(src) if extra is True else from_schema(src, extra, root)
    return value


def _dumps(value: Any) -> bytes:
    # ensure_ascii: the astral characters travel as surrogate-pair escapes, as a client's JSON library would send
    # them; the hostile shapes are spliced in as raw JSON text.
    return json.dumps(value).encode()


def well_formed(src: Source, models: Sequence[str], bodies: Bodies = CHAT) -> dict[str, Any]:
    """A body valid against the request schema, `model` mostly one the profile knows (else all are 404s)."""
    schema = request_schema(bodies.schema)
    body: dict[str, Any] = from_schema(src, schema, schema)
    body["model"] = pick(src, models) if models and not chance(src, 20) else text(src, 40)
    return body


def simple(src: Source, models: Sequence[str], bodies: Bodies = CHAT) -> dict[str, Any]:
    """One user message, maybe streamed: the base the other generators break."""
    model = pick(src, models) if models else "model"
    content = text(src, 30) or "hi"
    return bodies.plain(model, content, src.integer(0, 1) == 1)


# --------------------------------------------------------------------------------------- the kinds of case


def schema_case(src: Source, models: Sequence[str], bodies: Bodies = CHAT) -> Case:
    return Case("schema", _dumps(well_formed(src, models, bodies)))


def wrong_type(src: Source, models: Sequence[str], bodies: Bodies = CHAT) -> Case:
    """A schema field given a value of a type the schema does not allow."""
    properties: Mapping[str, Any] = request_schema(bodies.schema)["properties"]
    body = simple(src, models, bodies)
    field = pick(src, sorted(properties))
    body[field] = wrong_value(src, properties[field])
    return Case("wrong-type", _dumps(body), note=field)


def _hostile_text(src: Source) -> tuple[str, str]:
    """Hostile JSON text spliced in where a value goes (raw, because json.dumps cannot write most of these)."""
    shape = src.integer(0, 5)
    if shape == 0:
        return "control-characters", pick(
            src, ('"\\u0000"', '"a\\r\\nb"', '"\\u2028"', '"\u00e9\u20ac\U0001f600"')
        )
    if shape == 1:
        return "lone-surrogate", '"' + pick(
            src, ("\\ud800", "\\udfff", "a\\ud83d", "\\udc00x", "\\ud800\\nINJECTED")
        ) + '"'
    if shape == 2:
        return "non-finite", pick(
            src, ("1e999", "-1e999", "NaN", "Infinity", "-Infinity", "1" + "0" * 400, "9" * 5000)
        )
    if shape == 3:
        n = src.integer(100, 5000)
        return "deep-array", "[" * n + "]" * n
    if shape == 4:
        n = src.integer(100, 5000)
        return "deep-object", '{"a":' * n + "1" + "}" * n
    return "huge-string", '"' + "x" * src.integer(10_000, 1_000_000) + '"'


def hostile(src: Source, models: Sequence[str], bodies: Bodies = CHAT) -> Case:
    """A small valid body with one hostile JSON value in one of the places a gateway reads or forwards."""
    spot = pick(src, bodies.spots)
    shape, raw = _hostile_text(src)
    model = pick(src, models) if models else "model"
    body = _dumps(bodies.hole(spot, model, src.integer(0, 1) == 1))
    return Case("hostile", body.replace(json.dumps(HOLE).encode(), raw.encode()), note=f"{shape} in {spot}")


def _not_an_object(raw: bytes) -> bool:
    try:
        return not isinstance(json.loads(raw), dict)
    except ValueError:
        return True


def not_json(src: Source, models: Sequence[str], bodies: Bodies = CHAT) -> Case:
    """Bodies both docs refuse as invalid JSON: truncated, garbage, or a top level that is not an object."""
    form = src.integer(0, 2)
    if form == 0:
        whole = _dumps(simple(src, models, bodies))
        cut = src.integer(0, len(whole) - 1)
        return Case("not-json", whole[:cut], refused=True, note=f"truncated at byte {cut}")
    if form == 1:
        raw = bytes(src.integer(0, 255) for _ in range(src.integer(0, 64)))
        if not _not_an_object(
            raw
        ):  # 64 random bytes that parse as an object: never in practice; still refused
            raw = raw + b"}"
        return Case("not-json", raw, refused=True, note="bytes")
    value = json_of(src, pick(src, ("array", "string", "integer", "null", "boolean")))
    return Case("not-json", _dumps(value), refused=True, note="top level not an object")


_CONTENT_TYPES = (
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/xml",
    "text/html; charset=utf-8",
)
_TOKEN = "".join(chr(c) for c in range(33, 127))


def content_type(
    src: Source, models: Sequence[str], *, other_types_refused: bool, bodies: Bodies = CHAT
) -> Case:
    """A valid body under a content type other than JSON, or none at all."""
    body = _dumps(simple(src, models, bodies))
    if src.integer(0, 1) == 0:
        return Case("content-type", body, content_type=None, note="no content-type")
    value = pick(src, _CONTENT_TYPES) if src.integer(0, 1) == 0 else pick(src, _TOKEN) + text(src, 29, _TOKEN)
    if value.split(";")[0].strip().lower() == "application/json":
        value = "text/plain"
    return Case("content-type", body, content_type=value, refused=other_types_refused, note=value)


def refused_field(src: Source, models: Sequence[str], table: Mapping[str, Callable[[Source], Any]]) -> Case:
    """A valid body plus one field the doc's refusal table names, with a value it refuses."""
    body = simple(src, models)
    field = pick(src, sorted(table))
    body[field] = table[field](src)
    return Case("refused-field", _dumps(body), refused=True, note=field)


# EZAT "Ignored and refused fields": "Fields that would change the answer and have no equivalent are refused
# with `400` `invalid_request_error`" — the values of the table that are refused.
REFUSED_FIELDS: Mapping[str, Mapping[str, Callable[[Source], Any]]] = {
    "ezat": {
        "n": lambda src: number_in(src, 2, 128),
        "logprobs": lambda src: True,
        "top_logprobs": lambda src: number_in(src, 0, 20),
        "logit_bias": lambda src: {
            "1" + text(src, 5): src.integer(-100, 100) for _ in range(src.integer(1, 3))
        },
        "audio": lambda src: {"voice": "alloy", "format": "mp3"},
        "modalities": lambda src: pick(src, (["audio"], ["text", "audio"])),
        "web_search_options": lambda src: {},
        "functions": lambda src: [{"name": "f", "parameters": {"type": "object"}}],
        "function_call": lambda src: pick(src, ("auto", "none", {"name": "f"})),
    },
}


@dataclass(frozen=True)
class Generator:
    """The cases for one profile: `case(src)` picks a kind, then builds one from the same source. The kinds go
    from the plainest bodies to the richest, so that hypothesis, which shrinks a choice downwards, can turn a
    failing hostile or schema body into a plainer kind when that fails the same way."""

    models: tuple[str, ...]
    other_types_refused: bool
    refused: Mapping[str, Callable[[Source], Any]] | None
    bodies: Bodies = CHAT

    def case(self, src: Source) -> Case:
        kind = src.integer(0, 5 if self.refused else 4)
        if kind == 0:
            return not_json(src, self.models, self.bodies)
        if kind == 1:
            return content_type(
                src, self.models, other_types_refused=self.other_types_refused, bodies=self.bodies
            )
        if kind == 2:
            return wrong_type(src, self.models, self.bodies)
        if kind == 3:
            return hostile(src, self.models, self.bodies)
        if kind == 4:
            return schema_case(src, self.models, self.bodies)
        assert self.refused is not None
        return refused_field(src, self.models, self.refused)


def generator(
    profile: str, models: Sequence[str], *, other_types_refused: bool, bodies: Bodies = CHAT
) -> Generator:
    """The cases for `profile` on a surface (its doc's refusal table only on Chat Completions, where it holds)."""
    refused = REFUSED_FIELDS.get(profile) if bodies.surface == "chat-completions" else None
    return Generator(tuple(models), other_types_refused, refused, bodies)


def example_source(seed: int, index: int) -> RandomSource:
    """The source of example `index` of a run with `seed` (a string seed: hashed the same on every machine)."""
    return RandomSource(f"gc-fuzz:{seed}:{index}")
