"""Mutants: the pure mutation operations (table-driven), the catalog, and a fast sample of the kill matrix."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.errors import MutantCatalogError, OpError
from harness.mutants.catalog import load_catalog, mutant_from, select
from harness.mutants.ops.edits import Context, apply_edits, check_edit
from harness.mutants.ops.events import SseEvent, kind_of, split_sse
from harness.mutants.ops.http import edit_headers, map_status
from harness.mutants.ops.stream import rewrite_stream

COMPLETION = {
    "id": "chatcmpl-req_1",
    "object": "chat.completion",
    "created": 1793318400,
    "model": "anthropic/claude-sonnet-5-5",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Hi!",
                "refusal": None,
                "tool_calls": [
                    {"id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
                ],
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {
        "prompt_tokens": 30,
        "completion_tokens": 20,
        "total_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 5},
        "completion_tokens_details": {"reasoning_tokens": 0},
    },
}

EDITS: list[tuple[str, list[dict[str, Any]], str, Any]] = [
    ("set", [{"op": "set", "path": "model", "value": "x"}], "model", "x"),
    (
        "set-only-if-present-skips",
        [{"op": "set", "path": "nope", "value": 1, "only_if_present": True}],
        "nope",
        None,
    ),
    (
        "set-only-if-absent-skips",
        [{"op": "set", "path": "model", "value": "x", "only_if_absent": True}],
        "model",
        "anthropic/claude-sonnet-5-5",
    ),
    (
        "set-from-status",
        [{"op": "set", "path": "choices.0.index", "value_from": "status"}],
        "choices.0.index",
        404,
    ),
    (
        "delete",
        [{"op": "delete", "path": "choices.*.message.refusal"}],
        "choices.0.message",
        {
            "role": "assistant",
            "content": "Hi!",
            "tool_calls": COMPLETION["choices"][0]["message"]["tool_calls"],
        },
    ),
    (
        "delete-if-value",
        [{"op": "delete", "path": "usage.completion_tokens_details.reasoning_tokens", "if_value": 0}],
        "usage.completion_tokens_details",
        {},
    ),
    ("rename", [{"op": "rename", "path": "usage", "to": "x_usage"}], "x_usage.total_tokens", 50),
    (
        "map",
        [{"op": "map", "path": "choices.*.finish_reason", "values": [["tool_calls", "tool_call"]]}],
        "choices.0.finish_reason",
        "tool_call",
    ),
    (
        "map-null",
        [{"op": "map", "path": "choices.0.logprobs", "values": [[None, ""]]}],
        "choices.0.logprobs",
        "",
    ),
    ("add", [{"op": "add", "path": "usage.total_tokens", "value": 1}], "usage.total_tokens", 51),
    (
        "add-minus",
        [
            {
                "op": "add",
                "path": "usage.prompt_tokens",
                "minus": [
                    "usage.prompt_tokens_details.cached_tokens",
                    "usage.prompt_tokens_details.cache_write_tokens",
                ],
            }
        ],
        "usage.prompt_tokens",
        15,
    ),
    ("sub", [{"op": "sub", "path": "id", "pattern": "^chatcmpl-", "repl": ""}], "id", "req_1"),
    ("stringify", [{"op": "stringify", "path": "created"}], "created", "1793318400"),
    (
        "objectify",
        [{"op": "objectify", "path": "choices.*.message.tool_calls.*.function.arguments"}],
        "choices.0.message.tool_calls.0.function.arguments",
        {"a": 1},
    ),
    (
        "enclose",  # a custom tool's text as a function's {"input": …} (caozhiyuan/copilot-api#242)
        [
            {"op": "enclose", "path": "choices.0.message.content", "key": "input"},
            {"op": "stringify", "path": "choices.0.message.content"},
        ],
        "choices.0.message.content",
        '{"input": "Hi!"}',
    ),
    (
        "filter-has",
        [{"op": "set", "path": "choices.0.message.tool_calls.*[id].type", "value": "x"}],
        "choices.0.message.tool_calls.0.type",
        "x",
    ),
    (
        "filter-lacks-skips",
        [{"op": "set", "path": "choices.0.message.tool_calls.*[!id].type", "value": "x"}],
        "choices.0.message.tool_calls.0.type",
        "function",
    ),
    (
        "filter-equals",
        [{"op": "delete", "path": "choices.0.message.tool_calls.*[type=function]"}],
        "choices.0.message.tool_calls",
        [],
    ),
    ("negative-index", [{"op": "set", "path": "choices.-1.index", "value": 7}], "choices.0.index", 7),
    ("duplicate-item", [{"op": "duplicate_item", "path": "choices.0"}], "choices.1.index", 1),
    (
        "if-holds",
        [{"op": "set", "path": "model", "value": "y", "if": {"path": "object", "equals": "chat.completion"}}],
        "model",
        "y",
    ),
    (
        "if-fails",
        [{"op": "set", "path": "model", "value": "y", "if": {"path": "object", "equals": "other"}}],
        "model",
        "anthropic/claude-sonnet-5-5",
    ),
]


def _at(doc: Any, path: str) -> Any:
    for part in path.split("."):
        if doc is None:
            return None
        doc = doc[int(part)] if isinstance(doc, list) else doc.get(part)
    return doc


@pytest.mark.parametrize(("edits", "path", "expected"), [e[1:] for e in EDITS], ids=[e[0] for e in EDITS])
def test_edit(edits: list[dict[str, Any]], path: str, expected: Any) -> None:
    before = json.dumps(COMPLETION, sort_keys=True)
    out = apply_edits(COMPLETION, edits, Context(status=404))
    assert _at(out, path) == expected
    assert json.dumps(COMPLETION, sort_keys=True) == before  # inputs are never mutated


CLIENT = {
    "model": "m",
    "temperature": 1.7,
    "stop": "END",
    "reasoning_effort": "none",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "Use French."},
        {"role": "user", "content": "hi"},
    ],
}
UPSTREAM = {
    "model": "claude",
    "max_tokens": 64,
    "temperature": 1,
    "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use French."}],
    "messages": [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
    ],
}

UPSTREAM_EDITS: list[tuple[str, dict[str, Any], str, Any]] = [
    (
        "copy-from-client",
        {"op": "copy_from_client", "path": "temperature", "from": "temperature", "only_if_present": True},
        "temperature",
        1.7,
    ),
    (
        "copy-only-if-absent-skips",
        {"op": "copy_from_client", "path": "temperature", "from": "temperature", "only_if_absent": True},
        "temperature",
        1,
    ),
    (
        "copy-string-stop",
        {"op": "copy_from_client", "path": "stop_sequences", "from": "stop"},
        "stop_sequences",
        "END",
    ),
    (
        "remove-developer",
        {"op": "remove_client_texts", "path": "system", "role": "developer"},
        "system",
        [{"type": "text", "text": "Be brief."}],
    ),
    ("reverse", {"op": "reverse", "path": "system"}, "system.0.text", "Use French."),
    (
        "move-cache-control",
        {"op": "move_cache_control", "path": "messages.-1", "to": "messages.0"},
        "messages.0.content",
        [{"type": "text", "text": "one", "cache_control": {"type": "ephemeral"}}],
    ),
    (
        "if-client",
        {
            "op": "set",
            "path": "thinking",
            "value": {"type": "adaptive"},
            "if_client": {"path": "reasoning_effort", "one_of": ["none", "minimal"]},
        },
        "thinking.type",
        "adaptive",
    ),
]


@pytest.mark.parametrize(
    ("edit", "path", "expected"), [e[1:] for e in UPSTREAM_EDITS], ids=[e[0] for e in UPSTREAM_EDITS]
)
def test_upstream_edit_sees_the_client_request(edit: dict[str, Any], path: str, expected: Any) -> None:
    assert _at(apply_edits(UPSTREAM, [edit], Context(client=CLIENT)), path) == expected


PARTS = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "See:"}, {"type": "image_url", "image_url": {}}],
        },
    ]
}
CONTENT_EDITS: list[tuple[str, dict[str, Any], str, Any]] = [
    (
        "join-text-parts",
        {"op": "join_text_parts", "path": "messages.*.content"},
        "messages.1.content",
        "One.\nTwo.",
    ),
    (
        "join-keeps-an-image",
        {"op": "join_text_parts", "path": "messages.*.content"},
        "messages.2.content.1.type",
        "image_url",
    ),
    (
        "join-drops-other-parts",
        {"op": "join_text_parts", "path": "messages.*.content", "drop_other_parts": True, "sep": " "},
        "messages.2.content",
        "See:",
    ),
    (
        "join-leaves-strings",
        {"op": "join_text_parts", "path": "messages.*.content"},
        "messages.0.content",
        "Be brief.",
    ),
    (
        "wrap-string",
        {"op": "wrap_string", "path": "messages.*.content"},
        "messages.0.content",
        [{"type": "text", "text": "Be brief."}],
    ),
    (
        "wrap-leaves-parts",
        {"op": "wrap_string", "path": "messages.*.content"},
        "messages.1.content.1.text",
        "Two.",
    ),
]


@pytest.mark.parametrize(
    ("edit", "path", "expected"), [e[1:] for e in CONTENT_EDITS], ids=[e[0] for e in CONTENT_EDITS]
)
def test_content_shape_edits(edit: dict[str, Any], path: str, expected: Any) -> None:
    before = json.dumps(PARTS)
    assert _at(apply_edits(PARTS, [edit]), path) == expected
    assert json.dumps(PARTS) == before


@pytest.mark.parametrize(
    "edit",
    [
        {"op": "nope", "path": "a"},
        {"op": "set"},
        {"op": "rename", "path": "a"},
        {"op": "set", "path": "a.*x"},
    ],
    ids=["unknown-op", "no-path", "rename-no-to", "bad-seg"],
)
def test_bad_edit_is_refused(edit: dict[str, Any]) -> None:
    with pytest.raises(OpError):
        check_edit(edit)


# --- streams ---------------------------------------------------------------------------------------------

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def chunk(delta: dict[str, Any], finish: str | None = None) -> SseEvent:
    return SseEvent.of_data(
        {**HEAD, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
    )


ROLE = chunk({"role": "assistant", "content": ""})
TEXT1, TEXT2 = chunk({"content": "Hel"}), chunk({"content": "lo"})
FINISH = chunk({}, "stop")
USAGE = SseEvent.of_data(
    {**HEAD, "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
)
DONE = SseEvent.of_data("[DONE]")
PING = SseEvent((": ping",))
ERROR = SseEvent.of_data(
    {"error": {"message": "Overloaded", "type": "server_error", "param": None, "code": "overloaded"}}
)
STREAM = [ROLE, TEXT1, PING, TEXT2, FINISH, USAGE, DONE]
CALL_A = chunk(
    {
        "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
        ]
    }
)
CALL_B = chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":1}'}}]})


def kinds(events: list[SseEvent]) -> list[str]:
    return [kind_of(e) for e in events]


STREAM_CASES: list[tuple[str, list[SseEvent], list[dict[str, Any]], list[dict[str, Any]], Any]] = [
    ("identity", STREAM, [], [], ["role", "content", "comment", "content", "finish", "usage", "done"]),
    (
        "drop-done",
        STREAM,
        [],
        [{"op": "drop_done"}],
        ["role", "content", "comment", "content", "finish", "usage"],
    ),
    ("done-without-prefix", [FINISH, DONE], [], [{"op": "done_without_prefix"}], ["finish", "other"]),
    (
        "merge-role",
        STREAM,
        [],
        [{"op": "merge_role"}],
        ["role", "comment", "content", "finish", "usage", "done"],
    ),
    (
        "drop-finish",
        STREAM,
        [],
        [{"op": "drop", "select": "finish"}],
        ["role", "content", "comment", "content", "usage", "done"],
    ),
    (
        "duplicate-finish",
        [FINISH, DONE],
        [],
        [{"op": "duplicate", "select": "finish"}],
        ["finish", "finish", "done"],
    ),
    (
        "finish-with-content",
        STREAM,
        [],
        [{"op": "finish_with_content"}],
        ["role", "content", "comment", "finish", "usage", "done"],
    ),
    (
        "usage-in-finish",
        STREAM,
        [],
        [{"op": "usage_in_finish"}],
        ["role", "content", "comment", "content", "finish", "done"],
    ),
    (
        "usage-without-include",
        [TEXT1, FINISH, DONE],
        [],
        [{"op": "usage_without_include"}],
        ["content", "finish", "usage", "done"],
    ),
    ("ping-to-event", [PING], [], [{"op": "ping_to_event"}], ["type:ping"]),
    ("comment-to-data", [PING], [], [{"op": "comment_to_data"}], ["other"]),
    ("cut-after", STREAM, [], [{"op": "cut_after", "events": 2}], ["role", "content", "comment"]),
    (
        "error-to-stop",
        [ROLE, TEXT1, ERROR, DONE],
        [],
        [{"op": "error_to_stop"}],
        ["role", "content", "finish", "done"],
    ),
    (
        "no-done-after-error",
        [TEXT1, ERROR, DONE],
        [],
        [{"op": "drop_done_after_error"}],
        ["content", "error"],
    ),
    (
        "usage-after-error",
        [TEXT1, ERROR, DONE],
        [],
        [{"op": "usage_after_error"}],
        ["content", "error", "usage", "done"],
    ),
    ("error-as-field", [ERROR], [], [{"op": "error_as_field"}], ["other"]),
    (
        "edit-select-usage",
        STREAM,
        [{"op": "add", "path": "usage.total_tokens", "value": 1, "select": "usage"}],
        [],
        ["role", "content", "comment", "content", "finish", "usage", "done"],
    ),
    ("held-events-flush-at-end", [ROLE], [], [{"op": "merge_role"}], ["role"]),
]


@pytest.mark.parametrize(
    ("events", "edits", "ops", "expected"), [c[1:] for c in STREAM_CASES], ids=[c[0] for c in STREAM_CASES]
)
def test_stream_ops(
    events: list[SseEvent], edits: list[dict[str, Any]], ops: list[dict[str, Any]], expected: Any
) -> None:
    assert kinds(rewrite_stream(events, edits, ops)) == expected


def test_merge_role_puts_the_role_in_the_first_content_chunk() -> None:
    out = rewrite_stream([ROLE, TEXT1, TEXT2], [], [{"op": "merge_role"}])
    assert out[0].json()["choices"][0]["delta"] == {"role": "assistant", "content": "Hel"}


def test_finish_with_content_moves_the_last_text_into_the_finish_chunk() -> None:
    out = rewrite_stream([TEXT1, TEXT2, FINISH], [], [{"op": "finish_with_content"}])
    assert out[-1].json()["choices"][0] == {
        "index": 0,
        "delta": {"content": "lo"},
        "logprobs": None,
        "finish_reason": "stop",
    }


def test_repeat_tool_ids_copies_the_first_fragment_identity() -> None:
    out = rewrite_stream([CALL_A, CALL_B], [], [{"op": "repeat_tool_ids"}])
    call = out[1].json()["choices"][0]["delta"]["tool_calls"][0]
    assert (call["id"], call["type"], call["function"]["name"]) == ("call_1", "function", "f")


def test_merge_tool_arguments_sends_consecutive_fragments_as_one() -> None:
    part_1 = chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]})
    part_2 = chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]})
    out = rewrite_stream([CALL_A, part_1, part_2, FINISH], [], [{"op": "merge_tool_arguments"}])
    assert kinds(out) == ["tool", "tool", "finish"]
    assert out[0].json() == CALL_A.json()  # the first fragment (id, name) is not an arguments-only one
    assert out[1].json()["choices"][0]["delta"]["tool_calls"][0]["function"] == {"arguments": '{"a":1}'}


def test_usage_before_error_puts_the_usage_chunk_first() -> None:
    out = rewrite_stream([TEXT1, ERROR, DONE], [], [{"op": "usage_after_error", "before": True}])
    assert kinds(out) == ["content", "usage", "error", "done"]


def test_id_per_chunk_and_created_drift() -> None:
    ids = [e.json()["id"] for e in rewrite_stream([ROLE, TEXT1], [], [{"op": "id_per_chunk"}])]
    assert len(set(ids)) == 2
    created = [
        e.json()["created"]
        for e in rewrite_stream([ROLE, TEXT1], [{"op": "add", "path": "created", "per_event": 1}], [])
    ]
    assert created == [1, 2]


def test_usage_without_include_respects_the_request() -> None:
    ctx = Context(client={"stream": True, "stream_options": {"include_usage": True}})
    assert kinds(rewrite_stream([FINISH, DONE], [], [{"op": "usage_without_include"}], ctx)) == [
        "finish",
        "done",
    ]


def test_event_lines_and_encoding() -> None:
    out = rewrite_stream([TEXT1, PING], [], [{"op": "event_lines", "name": "message"}])
    assert out[0].encode().startswith(b"event: message\ndata: {")
    assert out[1].encode() == b": ping\n\n"


def test_split_sse_keeps_the_unfinished_rest() -> None:
    blocks, rest = split_sse(b"data: 1\n\ndata: 2\r\n\r\ndata: 3")
    assert blocks == [b"data: 1", b"data: 2"] and rest == b"data: 3"


@pytest.mark.parametrize(
    ("status", "table", "expected"),
    [(503, {503: 529}, 529), (400, {"400": 500}, 500), (200, {503: 529}, 200)],
    ids=["int", "str-key", "other"],
)
def test_map_status(status: int, table: dict[Any, Any], expected: int) -> None:
    assert map_status(status, table) == expected


def test_edit_headers() -> None:
    headers = [("Retry-After", "5"), ("request-id", "r"), ("x", "1")]
    out = edit_headers(
        headers,
        {
            "drop": ["x"],
            "rename": {"retry-after": "llm_provider-retry-after"},
            "set": {"request-id": "other"},
        },
    )
    assert out == [("llm_provider-retry-after", "5"), ("request-id", "other")]


# --- the catalog ------------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_catalog_loads_and_covers_every_area() -> None:
    catalog = load_catalog()
    assert len(catalog.mutants) >= 60
    areas = {m.area for m in catalog.mutants}
    assert areas >= {
        "response",
        "messages",
        "streaming",
        "tools",
        "images",
        "reasoning",
        "sampling",
        "output",
        "finish",
        "caching",
        "refuse",
        "ignore",
        "errors",
    }
    for m in catalog.mutants:
        assert re.search(r"[\w.-]+/[\w.-]+#\d+", m.models), (
            f"{m.id}: models must cite a real bug (owner/repo#N)"
        )


@pytest.mark.parametrize(
    "raw",
    [
        {"id": "x", "side": "client", "area": "a", "title": "t", "models": "m"},
        {"id": "x", "side": "sideways", "area": "a", "title": "t", "models": "m", "status": {1: 2}},
        {"id": "x", "side": "client", "area": "a", "title": "t", "models": "m", "stream": [{"op": "nope"}]},
        {
            "id": "x",
            "side": "client",
            "area": "a",
            "title": "t",
            "models": "m",
            "status": {1: 2},
            "colour": "red",
        },
    ],
    ids=["changes-nothing", "bad-side", "bad-stream-op", "unknown-key"],
)
def test_bad_mutant_is_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(MutantCatalogError):
        mutant_from(raw)


@pytest.mark.e2e
def test_sample_is_fixed_by_the_seed_and_keeps_named_ones() -> None:
    mutants = load_catalog().mutants
    a = select(mutants, "ezat", sample=5, seed=1, always=["streaming/no-done"])
    b = select(mutants, "ezat", sample=5, seed=1, always=["streaming/no-done"])
    assert [m.id for m in a] == [m.id for m in b]
    assert "streaming/no-done" in {m.id for m in a}


# --- the kill matrix, sampled (the full matrix is `gateway-conformance mutants --feature slow`) ------------

ALWAYS = [
    "finish/tool-call-singular",
    "streaming/role-merged-into-content",
    "streaming/no-done",
    "errors/529-passed-on",
    "sampling/temperature-uncapped",
    "messages/developer-dropped",
]


@pytest.mark.e2e
def test_sampled_mutants_are_all_killed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    argv = [
        "mutants",
        "--sample",
        "12",
        "--seed",
        "6",
        "--first-kill",
        "--no-baseline",
        "--jobs",
        "4",
        "--out",
        str(tmp_path),
    ]
    for name in ALWAYS:
        argv += ["--always", name]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads((tmp_path / "kill-matrix.json").read_text())
    ran = [m for m in report["mutants"] if m["verdict"] != "NOT_RUN"]
    assert len(ran) >= 10  # a sampled mutant that needs --feature slow is NOT_RUN
    assert {m["id"] for m in ran} >= set(ALWAYS)
    assert all(m["verdict"] == "KILLED" or m["survives_because"] for m in ran), out


def test_cut_after_seconds_ends_a_stream_that_outlasts_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Events within `seconds` of the first pass; the first one later becomes a timeout error and [DONE]."""
    import harness.mutants.ops.stream as ops_mod

    clock = iter([0.0, 1.0, 2.0, 3.5, 9.0, 9.5, 10.0])
    monkeypatch.setattr(ops_mod.time, "monotonic", lambda: next(clock))
    out = rewrite_stream(STREAM, [], [{"op": "cut_after_seconds", "seconds": 3}])
    assert kinds(out) == ["role", "content", "comment", "error", "done"]
    assert json.loads(out[3].data or "{}")["error"]["code"] == "timeout"
    monkeypatch.setattr(ops_mod.time, "monotonic", lambda: 5.0)
    assert kinds(rewrite_stream(STREAM, [], [{"op": "cut_after_seconds", "seconds": 60}])) == kinds(STREAM)
