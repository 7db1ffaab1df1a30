"""The fuzz's case generator: deterministic for a seed, schema-valid where it says so, every kind reached, and
the bridge to hypothesis (a seeded case's tape, replayed by hypothesis, is the same case; hypothesis shrinks it)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import jsonschema
import pytest

from harness.fuzz.bodies import MESSAGES_SPOTS, RESPONSES_SPOTS
from harness.fuzz.run import _generator, _models, generate_cases
from harness.fuzz.shrink import shrink
from harness.fuzz.strategies import Case, RandomSource, example_source, request_schema


@pytest.mark.parametrize("profile", ["ezat", "lyrouter", "relay"])
def test_the_same_seed_gives_the_same_cases_and_another_seed_others(profile: str) -> None:
    first = list(generate_cases(profile, [], seed=11, examples=300))
    assert first == list(generate_cases(profile, [], seed=11, examples=300))
    other = list(generate_cases(profile, [], seed=12, examples=300))
    assert sum(a != b for a, b in zip(first, other, strict=True)) > 250


def test_example_i_does_not_depend_on_the_examples_before_it() -> None:
    # the fast path's seed per example: a failure's example index and seed are its whole repro
    run = list(generate_cases("ezat", [], seed=3, examples=50))
    gen = _generator("ezat", _models("ezat"))
    assert gen.case(example_source(3, 49)) == run[49]


def test_every_kind_is_generated_and_schema_cases_are_schema_valid() -> None:
    cases = list(generate_cases("ezat", [], seed=0, examples=1200))
    kinds = Counter(c.kind for c in cases)
    assert set(kinds) == {"schema", "wrong-type", "hostile", "not-json", "content-type", "refused-field"}
    assert min(kinds.values()) > 120  # each about a sixth
    validator = jsonschema.Draft202012Validator(request_schema())
    for case in cases:
        if case.kind == "schema":
            body = json.loads(case.body)
            assert validator.is_valid(body), (case.body, next(iter(validator.iter_errors(body))).message)
        if case.kind == "not-json":
            assert not _parses_as_an_object(case.body), case
        if case.kind == "refused-field":
            assert case.refused
    shapes = {c.note.split(" in ")[0] for c in cases if c.kind == "hostile"}
    assert shapes == {
        "deep-array",
        "deep-object",
        "lone-surrogate",
        "non-finite",
        "huge-string",
        "control-characters",
    }


def _parses_as_an_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def test_a_wrong_type_is_never_the_type_the_schema_declares() -> None:
    properties = request_schema()["properties"]
    checked = 0
    for case in generate_cases("relay", [], seed=5, examples=1500):
        if case.kind != "wrong-type":
            continue
        field = case.note
        declared = properties[field].get("type")
        if declared is None:
            continue  # the schema names no type (oneOf, enum): any value, as before
        value = json.loads(case.body)[field]
        errors = list(jsonschema.Draft202012Validator({"type": declared}).iter_errors(value))
        assert errors, (field, value)
        checked += 1
    assert checked > 100


@pytest.mark.e2e
def test_hypothesis_replays_a_seeded_tape_as_the_same_case_then_shrinks_it() -> None:
    gen = _generator("ezat", _models("ezat"))
    for index in range(0, 600, 40):  # every kind, several times
        source = example_source(9, index)
        case = gen.case(source)
        seen: list[Case] = []

        def fails(candidate: Case, seen: list[Case] = seen) -> bool:
            seen.append(candidate)
            return True  # everything fails: hypothesis shrinks to its simplest case

        assert shrink(gen, source.tape, fails)
        assert seen[0] == case
        # the simplest kind, a few bytes (b"" or b"null": where hypothesis stops can vary with the machine's load)
        assert seen[-1].kind == "not-json" and len(seen[-1].body) <= 4, seen[-1]


@pytest.mark.e2e
def test_a_shrink_that_goes_on_too_long_stops_at_the_smallest_failure_so_far() -> None:
    gen = _generator("ezat", _models("ezat"))
    source = example_source(9, 25)
    case = gen.case(source)
    seen: list[Case] = []

    def fails(candidate: Case) -> bool:  # only the exact body fails: hypothesis would try for minutes
        seen.append(candidate)
        return candidate == case

    assert shrink(gen, source.tape, fails, seconds=0.5)
    assert seen[0] == case


def test_hypothesis_shrinks_a_failing_case_to_the_smallest_that_still_fails() -> None:
    """A pure stand-in for a gateway: "fails" on a body nested at least 300 arrays deep. The first failing
    example of the seed is shrunk to about 300 levels in the plainest place (the user message's content)."""
    gen = _generator("ezat", _models("ezat"))

    def deep(case: Case) -> bool:
        return b"[" * 300 in case.body

    index = next(i for i in range(2000) if deep(gen.case(example_source(0, i))))
    source = example_source(0, index)
    original = gen.case(source)
    recorded: list[Case] = []

    def fails(case: Case) -> bool:
        if deep(case):
            recorded.append(case)
            return True
        return False

    assert shrink(gen, source.tape, fails)
    minimal = recorded[-1]
    assert len(minimal.body) < len(original.body)
    assert minimal.kind == "hostile" and minimal.note == "deep-array in content"
    model = _models("ezat")[0]
    prefix = f'{{"model": "{model}", "messages": [{{"role": "user", "content": '.encode()
    assert minimal.body.startswith(prefix) and minimal.body.endswith(b"}]}")
    depth = minimal.body.count(b"[") - 1
    assert 300 <= depth <= 320, depth  # the threshold, give or take where hypothesis's search stopped


def test_a_tape_is_only_integers_in_their_bounds() -> None:
    # what hypothesis's database format and replay need: the choices an `st.integers(lo, hi)` makes
    class Checking(RandomSource):
        def integer(self, lo: int, hi: int) -> int:
            value = super().integer(lo, hi)
            assert lo <= value <= hi and type(value) is int
            return value

    gen = _generator("lyrouter", _models("lyrouter"))
    sizes: list[Any] = []
    for index in range(400):
        source = Checking(f"check:{index}")
        gen.case(source)
        sizes.append(len(source.tape))
    assert max(sizes) < 2000  # far below hypothesis's limit on the choices of one example


@pytest.mark.parametrize(
    ("profile", "schema", "spots"),
    [
        ("anthropic", "anthropic.messages.fuzz-request", MESSAGES_SPOTS),
        ("responses", "openai.responses.request", RESPONSES_SPOTS),
    ],
)
def test_every_surface_has_its_own_bodies_schema_valid_and_every_spot_reached(
    profile: str, schema: str, spots: tuple[str, ...]
) -> None:
    """Messages and Responses are fuzzed with their own bodies (issue 47): valid against their request schema
    where a case says so, a hostile value in each place the surface's gateway reads."""
    cases = list(generate_cases(profile, ["m"], seed=0, examples=2000))
    validator = jsonschema.Draft202012Validator(request_schema(schema))
    for case in cases:
        if case.kind == "schema":
            body = json.loads(case.body)
            assert validator.is_valid(body), (case.body, next(iter(validator.iter_errors(body))).message)
    reached = {c.note.split(" in ")[1] for c in cases if c.kind == "hostile"}
    assert reached == set(spots)
    plain = [json.loads(c.body) for c in cases if c.kind == "wrong-type"]
    key = "messages" if profile == "anthropic" else "input"
    assert all(key in body for body in plain)  # the surface's plain body, not a chat one
    assert {c.kind for c in cases} == {"schema", "wrong-type", "hostile", "not-json", "content-type"}
