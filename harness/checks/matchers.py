"""The matcher vocabulary (equals, absent, matches, type, ...) and RFC 9535 path assertions.

Matchers yield violations; a bad regex, schema or path in a rule is reported the same way rather
than raised, so one broken assertion never hides the others.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import jsonpath
import jsonschema

from harness.checks.refs import References
from harness.errors import PathError, RefError
from harness.values import json_equal, json_type, short
from harness.violation import Violation

# RFC 9535 only: no python-jsonpath extensions, so rules stay portable to other harness languages.
_JSONPATH: Final = jsonpath.JSONPathEnvironment(strict=True, filter_caching=False)

MATCHER_KEYS: Final = frozenset(
    {
        "equals",
        "json_equals",
        "not_equals",
        "absent",
        "exists",
        "distinct",
        "in_order",
        "matches",
        "type",
        "length",
        "contains",
        "one_of",
        "schema",
        "excludes",
        "less_than",
        "greater_than",
        "suffix_of",
    }
)
_REF_KEYS: Final = (
    "equals",
    "json_equals",
    "in_order",
    "not_equals",
    "contains",
    "one_of",
    "matches",
    "excludes",
    "schema",
    "less_than",
    "greater_than",
    "suffix_of",
)


def _has_type(value: Any, wanted: str) -> bool:
    actual = json_type(value)
    if wanted == "number":
        return actual in ("integer", "number")
    if wanted == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == wanted


def find(document: Any, path: str) -> list[Any]:
    """Every value `path` selects in `document` (RFC 9535)."""
    try:
        return list(_JSONPATH.findall(path, document))
    except jsonpath.JSONPathError as exc:
        raise PathError(f"bad JSONPath {path!r}: {exc}") from exc


def match_values(
    matcher: Mapping[str, Any], values: Sequence[Any], *, check: str, path: str, refs: References
) -> Iterator[Violation]:
    """Apply every key of `matcher` to `values` (all the matches of one path, or one header)."""

    def violation(expected: Any, actual: Any, message: str) -> Violation:
        return Violation(check, path, short(expected), short(actual), message)

    try:
        resolved = {
            key: refs.resolve(value, escape=re.escape if key == "matches" else None)
            if key in _REF_KEYS
            else value
            for key, value in matcher.items()
        }
    except RefError as exc:
        yield violation(None, None, str(exc))
        return

    if resolved.get("absent") is True and any(v is not None for v in values):
        present = [v for v in values if v is not None]
        yield violation("absent", present[0] if len(present) == 1 else present, "expected absent (or null)")
    if resolved.get("exists") is True and not any(v is not None for v in values):
        yield violation("exists", values[0] if values else None, "expected a non-null value, found none")

    if "excludes" in resolved:
        # Vacuously true when nothing matched: "no value here holds this text" (e.g. a leaked key).
        needle = str(resolved["excludes"])
        for value in values:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if needle in text:
                yield violation({"excludes": needle}, value, "holds text it must not hold")

    if resolved.get("distinct") is True:
        # Over every match at once: no two equal (each tool call its own id). Vacuous for 0 or 1 match.
        seen: list[Any] = []
        for value in values:
            if any(json_equal(value, earlier) for earlier in seen):
                yield violation("distinct values", value, "a value repeats: expected each to be different")
                break
            seen.append(value)

    if "in_order" in resolved:
        # Over every match at once: the values, in order, are exactly this list (each fragment forwarded as
        # the provider sent it: none merged, split or lost).
        wanted = resolved["in_order"]
        if (
            not isinstance(wanted, list)
            or len(values) != len(wanted)
            or not all(json_equal(v, w) for v, w in zip(values, wanted, strict=False))
        ):
            yield violation({"in_order": wanted}, list(values), "the values in order differ from the list")

    value_keys = [k for k in resolved if k not in ("absent", "exists", "excludes", "distinct", "in_order")]
    if not value_keys:
        return
    if not values:
        yield violation({k: resolved[k] for k in value_keys}, None, "nothing matched")
        return
    for value in values:
        for key in value_keys:
            yield from _match_one(key, resolved[key], value, violation)


def _match_one(key: str, expected: Any, value: Any, violation: Any) -> Iterator[Violation]:
    if key == "equals":
        if not json_equal(value, expected):
            yield violation(expected, value, "not equal")
    elif key == "json_equals":
        yield from _json_equals(expected, value, violation)
    elif key == "not_equals":
        if json_equal(value, expected):
            yield violation({"not": expected}, value, "equal, expected a different value")
    elif key == "one_of":
        options = expected if isinstance(expected, list) else [expected]
        if not any(json_equal(value, option) for option in options):
            yield violation({"one_of": options}, value, "not one of the listed values")
    elif key == "matches":
        if not isinstance(value, str):
            yield violation(
                {"matches": expected}, value, f"expected a string to match, got {json_type(value)}"
            )
            return
        try:
            found = re.search(str(expected), value)
        except re.error as exc:
            yield violation({"matches": expected}, value, f"bad regular expression in the rule: {exc}")
            return
        if found is None:
            yield violation({"matches": expected}, value, "does not match the pattern")
    elif key == "type":
        if not _has_type(value, str(expected)):
            yield violation({"type": expected}, value, f"expected type {expected}, got {json_type(value)}")
    elif key == "length":
        if not isinstance(value, (str, list, tuple, Mapping)):
            yield violation({"length": expected}, value, f"length of a {json_type(value)} is undefined")
        elif len(value) != expected:
            yield violation({"length": expected}, len(value), f"length {len(value)}, expected {expected}")
    elif key == "contains":
        yield from _contains(expected, value, violation)
    elif key == "schema":
        yield from _schema(expected, value, violation)
    elif key in ("less_than", "greater_than"):
        yield from _compare(key, expected, value, violation)
    elif key == "suffix_of":
        # the value ends the given string: a model id sent with its provider prefix taken off
        # (`anthropic/claude-x` -> `claude-x`) is the same model; another model's id is not
        if not (isinstance(value, str) and value and str(expected).endswith(value)):
            yield violation({"suffix_of": expected}, value, "not the given string or an ending of it")
    else:
        yield violation({key: expected}, value, f"unknown matcher {key!r}")


def _json_equals(expected: Any, value: Any, violation: Any) -> Iterator[Violation]:
    """A string of JSON text (a tool call's `arguments`) that parses to the expected value: key order, spacing
    and escapes (`"Osl\\u006f"`) are the writer's choice, the value is not."""
    if not isinstance(value, str):
        yield violation({"json_equals": expected}, value, f"expected JSON text, got {json_type(value)}")
        return
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        yield violation({"json_equals": expected}, value, f"not JSON: {exc}")
        return
    if not json_equal(parsed, expected):
        yield violation({"json_equals": expected}, value, "parses to a different value")


def _contains(expected: Any, value: Any, violation: Any) -> Iterator[Violation]:
    if isinstance(value, str):
        if not isinstance(expected, str):
            yield violation({"contains": expected}, value, "a string can only contain a string")
        elif expected not in value:
            yield violation({"contains": expected}, value, "substring not found")
    elif isinstance(value, (list, tuple)):
        if not any(json_equal(item, expected) for item in value):
            yield violation({"contains": expected}, value, "no equal item in the array")
    else:
        yield violation(
            {"contains": expected}, value, f"`contains` needs a string or an array, got {json_type(value)}"
        )


_DECIMAL = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")


def as_number(value: Any) -> float | None:
    """A JSON number, or a string that spells a decimal number (a header such as X-Relay-Cost-Usd); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _DECIMAL.match(value):
        return float(value)
    return None


def _compare(key: str, expected: Any, value: Any, violation: Any) -> Iterator[Violation]:
    # Costs and counts compared with each other (two answers of one rule): numbers or decimal strings.
    bound, actual = as_number(expected), as_number(value)
    if bound is None:
        yield violation({key: expected}, value, f"`{key}` needs a number (or a decimal string) in the rule")
    elif actual is None:
        yield violation({key: expected}, value, f"expected a number, got {json_type(value)}")
    elif key == "less_than" and not actual < bound:
        yield violation({key: expected}, value, f"not less than {expected}")
    elif key == "greater_than" and not actual > bound:
        yield violation({key: expected}, value, f"not greater than {expected}")


_INLINE: dict[str, jsonschema.Draft202012Validator] = {}  # a rule's inline schema, checked and built once
_INLINE_LOCK = threading.Lock()


def _inline_validator(schema: Any) -> jsonschema.Draft202012Validator:
    key = json.dumps(schema, sort_keys=True, default=str)
    with _INLINE_LOCK:
        built = _INLINE.get(key)
        if built is None:
            jsonschema.Draft202012Validator.check_schema(schema)
            built = _INLINE[key] = jsonschema.Draft202012Validator(schema)
    return built


def _schema(schema: Any, value: Any, violation: Any) -> Iterator[Violation]:
    try:
        validator = _inline_validator(schema)
        errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType, TypeError, ValueError) as exc:
        yield violation({"schema": schema}, value, f"bad inline schema in the rule: {exc}")
        return
    for error in errors[:5]:
        where = "".join(f"[{p!r}]" for p in error.absolute_path)
        yield violation({"schema": "inline"}, error.instance, f"schema{where}: {error.message}")


def check_path_assertions(
    assertions: Any, document: Any, *, check: str, refs: References, stream: bool, prefix: str = ""
) -> Iterator[Violation]:
    """Run `[{path, <matcher>…, stream?}]` against one JSON document; `stream` is this run's variant."""
    if not isinstance(assertions, list):
        yield Violation(
            check, prefix or "$", "a list of path assertions", short(assertions), "bad rule value"
        )
        return
    for assertion in assertions:
        if not isinstance(assertion, Mapping) or not isinstance(assertion.get("path"), str):
            yield Violation(
                check, prefix or "$", "{path: ..., matcher}", short(assertion), "bad path assertion"
            )
            continue
        if "stream" in assertion and assertion["stream"] is not stream:
            continue
        path = assertion["path"]
        # "chunks" + "$[0].id" reads "chunks[0].id"; "upstream[1]" + "$.model" reads "upstream[1].model".
        where = prefix + path[1:] if prefix else path
        try:
            values = find(document, path)
        except PathError as exc:
            yield Violation(check, where, None, None, str(exc))
            continue
        matcher = {k: v for k, v in assertion.items() if k in MATCHER_KEYS}
        yield from match_values(matcher, values, check=check, path=where, refs=refs)
