"""Wire-schema validation (specs/schema/wire) that reports violations, for `schema` and `upstream_schema`.

The schema files are static package data, read once per name: the cache is the one piece of state
here, and it never changes what a check returns.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema

from harness.paths import schema_path
from harness.values import short
from harness.violation import Violation

MAX_ERRORS = 20  # per document: one broken chunk shape repeated 500 times helps nobody


_BUILDING = threading.Lock()  # rules run on several threads: one builds a validator, the others wait for it


def validator(name: str) -> jsonschema.Draft202012Validator:
    """The validator for a wire schema; FileNotFoundError / ValueError when it is missing or broken."""
    with _BUILDING:
        return _validator(name)


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    # Package data, checked against its metaschema by the test suite (test_shipped_json_schemas_are_valid).
    return jsonschema.Draft202012Validator(schema)


def validate(name: str, document: Any, *, check: str, where: str) -> Iterator[Violation]:
    """Every way `document` (found at `where`) breaks schema `name`, as violations."""
    try:
        schema_validator = validator(name)
    except (OSError, ValueError, jsonschema.SchemaError) as exc:
        yield Violation(check, where, name, None, f"cannot load wire schema {name!r}: {exc}")
        return
    errors = sorted(schema_validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors[:MAX_ERRORS]:
        path = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        yield Violation(
            check, path, f"{name} schema", short(error.instance), f"{name}: {_best(error).message}"
        )
    if len(errors) > MAX_ERRORS:
        yield Violation(
            check, where, f"{name} schema", None, f"{len(errors) - MAX_ERRORS} more schema errors"
        )


def _best(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """For oneOf/anyOf failures, the most relevant sub-error (jsonschema's best_match)."""
    if error.context:
        return jsonschema.exceptions.best_match(error.context) or error
    return error
