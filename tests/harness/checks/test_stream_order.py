"""`stream_order` on golden streams: the good ones pass, each bad one (real-gateway-bugs.md §1-2) is caught."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checks import run_checks
from harness.surfaces.chat_completions.stream_order import check_stream_order
from tests.harness.checks.exchanges import exchange, messages, stream

GOOD = [
    ("text", {}, {}),
    ("text_usage", {}, {"include_usage": True}),
    ("text_ping", {}, {}),
    ("text_crlf", {}, {}),
    ("tools_parallel", {}, {"include_usage": True}),
    ("error_then_done", {"error": True}, {}),
    ("error_no_done", {"error": True, "done": "forbidden"}, {}),
    ("text_ping", {"comments": "required"}, {}),
    ("no_role_chunk", {"first_delta": {}}, {}),
    ("text_usage", {"usage_chunk": "optional"}, {}),
    ("text", {"usage_chunk": "optional", "done": "optional"}, {}),
    # A failed stream's usage chunk is judged only as the rule says (EZAT bans it; LYRouter's doc is silent).
    ("error_with_usage", {"error": True}, {"include_usage": True}),
    ("error_with_usage", {"error": True}, {}),
    # Audit D2: usage on every chunk, unasked, is the SHOULD rule's (no-usage-unasked), not a MUST rule's that
    # leaves the usage chunk optional.
    ("usage_every_chunk", {"usage_chunk": "optional"}, {}),
    # Audit D20: a continuation fragment repeating only `type` breaks no official client (openai-python
    # replaces it); judged only by the SHOULD rule that asks (fragment_type: forbidden).
    ("tool_type_repeated", {}, {}),
    # TensorZero's `name: ""` on every continuation fragment: concatenating "" changes nothing in openai-python,
    # openai-node skips a falsy name; the same SHOULD judges it.
    ("tool_name_empty_continuation", {}, {}),
]


@pytest.mark.parametrize(("name", "options", "kwargs"), GOOD, ids=[f"{g[0]}-{i}" for i, g in enumerate(GOOD)])
def test_good_streams_pass(name: str, options: dict[str, Any], kwargs: dict[str, Any]) -> None:
    violations = list(check_stream_order(options, stream(name, **kwargs)))
    assert violations == [], messages(violations)


BAD = [
    # (fixture, options, request kwargs, expected message fragment, expected path fragment)
    ("content_in_finish", {}, {}, "the finish chunk's delta is not empty", "stream[2].choices[0].delta"),
    ("finish_empty_string", {}, {}, 'finish_reason is ""', "stream[0].choices[0].finish_reason"),
    ("role_repeated", {}, {}, "delta.role repeated", "stream[1].choices[0].delta.role"),
    ("no_role_chunk", {}, {}, "the first chunk's delta lacks role", "stream[0].choices[0].delta"),
    ("two_finish", {}, {}, "a second finish chunk", "stream[4].choices[0].finish_reason"),
    ("two_finish", {}, {}, "usage on a chunk with choices", "stream[4].usage"),
    ("no_done", {}, {}, "does not end with data: [DONE]", "stream"),
    ("done_without_data", {}, {}, "line without a colon", "stream[4]"),
    ("done_without_data", {}, {}, "does not end with data: [DONE]", "stream"),
    ("done_unterminated", {}, {}, "ends inside an event", "stream[4]"),
    ("usage_every_chunk", {}, {"include_usage": True}, "usage on a chunk with choices", "stream[0].usage"),
    (
        "usage_every_chunk",
        {"usage_chunk": "optional"},
        {"include_usage": True},
        "usage on a chunk with choices",
        "stream[0].usage",
    ),
    (
        "usage_every_chunk",
        {"usage_chunk": "forbidden"},
        {},
        "usage on a chunk with choices",
        "stream[0].usage",
    ),
    ("usage_before_finish", {}, {"include_usage": True}, "a chunk after the usage chunk", "stream[4]"),
    (
        "usage_before_finish",
        {},
        {"include_usage": True},
        "usage chunk comes before the finish chunk",
        "stream[3]",
    ),
    ("text_usage", {}, {}, "a usage chunk although stream_options.include_usage was not set", "stream[4]"),
    ("text", {}, {"include_usage": True}, "no usage chunk", "stream"),
    ("text", {"usage_chunk": "required"}, {}, "no usage chunk", "stream"),
    ("event_lines", {}, {}, "an SSE `event:` field", "stream[0]"),
    ("event_lines", {}, {}, "an SSE `event:` field", "stream[4]"),
    ("id_field", {}, {}, "an SSE `id:` field", "stream[0]"),
    ("ping_rewrapped", {}, {}, "an SSE comment rewrapped as data", "stream[1]"),
    ("event_ping_no_data", {}, {}, "an event without data", "stream[1]"),
    ("text_ping", {"comments": "forbidden"}, {}, "an SSE comment line", "stream@0"),
    ("text", {"comments": "required"}, {}, "no SSE comment line", "stream"),
    ("no_finish", {}, {}, "no chunk with a non-null finish_reason", "choices[0].finish_reason"),
    ("finish_end_turn", {}, {}, "'end_turn' is not an OpenAI value", "stream[3].choices[0].finish_reason"),
    ("id_changes", {}, {}, "id changes between chunks (3 of 4 chunks)", "stream[1].id"),
    ("created_drifts", {"created": "constant"}, {}, "created changes between chunks", "stream[1].created"),
    ("cr_only", {}, {}, "lone CR", "stream[0]"),
    ("garbage", {}, {}, "line without a colon", "stream[0]"),
    ("garbage", {}, {}, "the stream has no chunk with choices", "stream"),
    ("truncated", {}, {}, "ends inside an event", "stream[2]"),
    ("truncated", {}, {}, "data is not JSON", "stream[2]"),
    ("error_then_done", {}, {}, "an unexpected error event", "stream[2]"),
    (
        "error_then_done",
        {"error": True, "done": "forbidden"},
        {},
        "data: [DONE] is sent although",
        "stream[3]",
    ),
    ("error_no_done", {"error": True}, {}, "does not end with data: [DONE]", "stream"),
    ("text", {"error": True}, {}, "does not end with an error event", "stream"),
    (
        "error_with_usage",
        {"error": True, "usage_chunk": "forbidden"},
        {"include_usage": True},
        "a usage chunk although the stream failed",
        "stream[2]",
    ),
    (
        "tool_index_missing",
        {},
        {},
        "without an integer index",
        "stream[3].choices[0].delta.tool_calls[0].index",
    ),
    (
        "tool_index_one_based",
        {},
        {},
        "0-based and contiguous",
        "stream[2].choices[0].delta.tool_calls[0].index",
    ),
    ("tool_index_shared", {}, {}, "two calls share one index", "stream[5].choices[0].delta.tool_calls[0].id"),
    (
        "tool_index_shared",
        {},
        {},
        "joined arguments are not one JSON object",
        "choices[0].tool_calls[0].function.arguments",
    ),
    (
        "tool_id_repeated",
        {},
        {},
        "continuation fragment repeats id",
        "stream[3].choices[0].delta.tool_calls[0]",
    ),
    ("tool_id_missing", {}, {}, "has no id", "stream[5].choices[0].delta.tool_calls[0].id"),
    (
        "tool_type_repeated",
        {"fragment_type": "forbidden"},
        {},
        "continuation fragment repeats type",
        "stream[3]",
    ),
    # an empty name on a continuation is harmless to the SDKs: judged only with the SHOULD's fragment_type option
    (
        "tool_name_empty_continuation",
        {"fragment_type": "forbidden"},
        {},
        'function.name "" on a continuation',
        "stream[3]",
    ),
    ("tool_arguments_object", {}, {}, "arguments is a object, not a string", "stream[3]"),
    (
        "tool_arguments_not_json",
        {},
        {},
        "joined arguments are not one JSON object",
        "choices[0].tool_calls[0]",
    ),
]


@pytest.mark.parametrize(
    ("name", "options", "kwargs", "message", "path"),
    BAD,
    ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)],
)
def test_bad_streams_are_caught(
    name: str, options: dict[str, Any], kwargs: dict[str, Any], message: str, path: str
) -> None:
    violations = list(check_stream_order(options, stream(name, **kwargs)))
    assert any(message in v.message and v.path.startswith(path) for v in violations), messages(violations)
    assert all(v.check == "stream_order" for v in violations)


def test_wrong_content_type_is_reported() -> None:
    ex = stream("text", headers={"content-type": "application/json"})
    assert "wrong content type" in messages(list(check_stream_order({}, ex)))


@pytest.mark.parametrize(
    ("raw", "status", "error"),
    [(b"", None, "connection refused"), (b'data: {"id":', 200, "connection reset")],
    ids=["no-response", "reset-mid-stream"],
)
def test_no_or_cut_response_is_a_violation(raw: bytes, status: int | None, error: str) -> None:
    ex = exchange(raw, status=status, stream=True, transport_error=error)
    violations = list(check_stream_order({}, ex))
    assert violations and error in messages(violations)


def test_json_error_answer_to_a_stream_request_is_not_a_stream() -> None:
    ex = exchange("json/error.json", status=400, stream=True, headers={"content-type": "application/json"})
    (violation,) = check_stream_order({}, ex)
    assert violation.message == "the answer is not a stream"


def test_registered_and_run_by_run_checks() -> None:
    assert run_checks({"stream_order": {}}, stream("text")) == []


def _with_fields(prefix: bytes, *, ping_after_first: bool = False) -> bytes:
    """The golden text stream with `prefix` lines before each data line (and a ping block after the first)."""
    from tests.harness.checks.exchanges import fixture

    out = []
    for i, block in enumerate(b for b in fixture("sse/text.sse").split(b"\n\n") if b.strip()):
        out.append(prefix.replace(b"N", str(i).encode()) + block + b"\n\n")
        if ping_after_first and i == 0:
            out.append(b": ping\n\n")
    return b"".join(out)


@pytest.mark.parametrize(
    ("prefix", "ping", "sdk_breaks"),
    [
        (b"event: message\n", True, False),  # both SDKs read past a plain event name
        (b"id: N\n", False, False),  # an id with no comment block after it dispatches nothing extra
        (b"id: N\n", True, True),  # openai-python: the ping block becomes an empty event it cannot parse
        (b"event: thread.message.delta\n", False, True),  # both SDKs wrap thread.* as another API's event
        (b"event: error\n", False, True),  # openai-node raises a chunk named error
    ],
)
def test_sse_fields_sdk_judges_only_what_breaks_the_sdks(prefix: bytes, ping: bool, sdk_breaks: bool) -> None:
    """Audit S33: `sse_fields: sdk` (the MUST) flags what openai-python 3.57 / openai-node 7.55 misread;
    the default (the SHOULD no-sse-fields) flags every event, id or retry field."""
    from tests.harness.checks.exchanges import exchange

    ex = exchange(_with_fields(prefix, ping_after_first=ping), stream=True)
    sdk = list(check_stream_order({"sse_fields": "sdk", "comments": "allowed"}, ex))
    assert bool(sdk) is sdk_breaks, messages(sdk)
    assert list(check_stream_order({}, ex)) != []


def test_created_is_judged_only_where_the_rule_asks() -> None:
    """A gateway stamping each chunk with the second it converted it (TensorZero 2026.6.0) shows it only in a stream
    that crosses a second: judged by every rule, a fast rule would fail by chance and pass on the next run, and a
    stored verdict would not reproduce. Only a rule asking `created: constant` (over a paced stream) judges it."""
    drifting = stream("created_drifts")
    assert not any("created" in v.message for v in check_stream_order({}, drifting))
    assert any(
        "created changes between chunks" in v.message
        for v in check_stream_order({"created": "constant"}, drifting)
    )
