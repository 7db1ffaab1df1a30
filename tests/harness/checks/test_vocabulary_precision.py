"""The issue-14 vocabulary: raw upstream bytes, two upstream values compared, the loopback listener, the
answer's timing, and `${...}` references in `message_pattern`. Each kind passes on a good exchange and fails
on the bad one it exists to catch."""

from __future__ import annotations

import dataclasses
import json
import socket
from typing import Any

import pytest

from harness.checks import check_for
from harness.engine.listener import Listener, fill, uses_listener
from harness.exchange import Exchange, ListenerRecord
from harness.surfaces.chat_completions import SURFACE as CHAT
from tests.harness.checks.exchanges import call, exchange, messages

ORDERED = b'{"model":"m","tools":[{"a":1,"b":{"x":1,"y":2}},{"a":1,"b":{"x":1,"y":2}}],"messages":[]}'
REORDERED = b'{"model":"m","tools":[{"a":1,"b":{"x":1,"y":2}},{"b":{"y":2,"x":1},"a":1}],"messages":[]}'
DIFFERENT = b'{"model":"m","tools":[{"a":1,"b":{"x":1,"y":2}},{"a":2,"b":{"x":1,"y":2}}],"messages":[]}'
COMPARE = [{"path": "$.tools[0]", "same_as": "$.tools[1]", "order": True}]

ERROR = json.dumps(
    {
        "error": {
            "message": "model (x.y) is unknown",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
).encode()


def raw_call(data: bytes) -> Exchange:
    return exchange("json/completion_text.json", upstream=(call(raw=data),))


def with_listener(connections: tuple[bytes, ...] | None, elapsed: float = 0.1) -> Exchange:
    base = exchange(ERROR, status=400)
    record = None if connections is None else ListenerRecord("http://127.0.0.2:9", connections)
    return dataclasses.replace(
        base, listener=record, response=dataclasses.replace(base.response, elapsed=elapsed)
    )


GOOD: list[tuple[str, str, Any, Exchange]] = [
    ("upstream_raw", "key-order", {"matches": r'^\{"model":"m","tools":'}, raw_call(ORDERED)),
    ("upstream_raw", "each-call", {"call": "each", "contains": '"messages":[]'}, raw_call(ORDERED)),
    ("upstream_compare", "same-order", COMPARE, raw_call(ORDERED)),
    (
        "upstream_compare",
        "unordered-equal",
        [{"path": "$.tools[0]", "same_as": "$.tools[1]"}],
        raw_call(REORDERED),
    ),
    ("listener", "untouched", {"connections": 0}, with_listener(())),
    ("elapsed", "fast", {"max": 2}, with_listener((), elapsed=0.3)),
    ("error", "pattern-ref", {"message_pattern": "^model \\(${request.body.model}\\) is"}, None),
]
BAD: list[tuple[str, str, Any, Exchange, str]] = [
    ("upstream_raw", "key-order", {"matches": r'^\{"messages"'}, raw_call(ORDERED), "does not match"),
    ("upstream_compare", "reordered", COMPARE, raw_call(REORDERED), "not in the same order"),
    ("upstream_compare", "different", COMPARE, raw_call(DIFFERENT), "differs from"),
    (
        "upstream_compare",
        "counts",
        [{"path": "$.tools[*]", "same_as": "$.model"}],
        raw_call(ORDERED),
        "same number of values",
    ),
    ("listener", "touched", {"connections": 0}, with_listener((b"GET /photo.png HTTP/1.1",)), "connected"),
    ("listener", "no-listener", {"connections": 0}, with_listener(None), "opened no listener"),
    ("elapsed", "slow", {"max": 2}, with_listener((), elapsed=15.2), "took 15.20s"),
    (
        "error",
        "pattern-ref-escaped",
        {"message_pattern": "^model ${request.body.model} is"},
        None,
        "does not match",
    ),
]


def _pattern_exchange() -> Exchange:
    # `x.y` holds a regex metacharacter: the reference must be escaped, so `x.y` matches only itself.
    return exchange(ERROR, status=400, body={"model": "x.y", "messages": []})


@pytest.mark.parametrize(("kind", "label", "expected", "ex"), GOOD, ids=[f"{g[0]}-{g[1]}" for g in GOOD])
def test_new_kinds_pass(kind: str, label: str, expected: Any, ex: Exchange | None) -> None:
    violations = list(check_for(kind, CHAT)(expected, ex or _pattern_exchange()))
    assert violations == [], messages(violations)


@pytest.mark.parametrize(
    ("kind", "label", "expected", "ex", "message"), BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD]
)
def test_new_kinds_fail(kind: str, label: str, expected: Any, ex: Exchange | None, message: str) -> None:
    violations = list(check_for(kind, CHAT)(expected, ex or _pattern_exchange()))
    assert violations, "expected a violation"
    assert any(message in v.message for v in violations), messages(violations)


def test_message_pattern_reference_is_literal_text() -> None:
    """`x.y` as a reference must not match `xzy`: the referenced text is escaped."""
    body = json.dumps(
        {"error": {"message": "model (xzy) is unknown", "type": "t", "param": None, "code": None}}
    )
    ex = exchange(body.encode(), status=400, body={"model": "x.y", "messages": []})
    assert list(check_for("error", CHAT)({"message_pattern": r"\(${request.body.model}\)"}, ex))


def test_listener_counts_connections_and_stops() -> None:
    listener = Listener()
    host, port = listener.url.removeprefix("http://").rsplit(":", 1)
    assert host.startswith("127.")
    with socket.create_connection((host, int(port)), timeout=2) as conn:
        conn.sendall(b"GET /x HTTP/1.1\r\n\r\n")
        conn.recv(10)  # the listener closes without answering
    record = listener.close()
    assert len(record.connections) == 1
    assert record.connections[0].startswith(b"GET /x")
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=1)


def test_listener_placeholder_is_found_and_filled() -> None:
    request = {"body": {"messages": [{"content": [{"image_url": {"url": "${listener_url}/a.png"}}]}]}}
    assert uses_listener(request) and not uses_listener({"body": {"messages": []}})
    filled = fill(request, "http://127.0.0.2:5")
    assert filled["body"]["messages"][0]["content"][0]["image_url"]["url"] == "http://127.0.0.2:5/a.png"
    assert request["body"]["messages"][0]["content"][0]["image_url"]["url"] == "${listener_url}/a.png"


# --- issue 24: numeric comparison (costs of two answers) and status classes --------------------------------


@pytest.mark.parametrize(
    ("matcher", "value", "holds"),
    [
        ({"less_than": "0.006450"}, "0.000966", True),
        ({"less_than": "0.006450"}, "0.006450", False),
        ({"less_than": 1}, 0.5, True),
        ({"greater_than": 0}, "0.0001", True),
        ({"greater_than": 0}, "0", False),
        ({"greater_than": 0}, "free", False),  # not a number: a violation, never a pass
        ({"less_than": "n/a"}, 1, False),  # a bound that is not a number (a missing header): a violation
    ],
)
def test_less_than_and_greater_than(matcher: dict[str, Any], value: Any, holds: bool) -> None:
    from harness.checks.matchers import match_values
    from harness.checks.refs import References

    ex = exchange("json/completion_text.json")
    found = list(match_values(matcher, [value], check="headers", path="x", refs=References(ex)))
    assert (not found) is holds, found


@pytest.mark.parametrize(
    ("value", "holds"),
    [
        ('{"city": "Oslo"}', True),
        ('{"city":"Osl\\u006f"}', True),  # an escape the writer chose: the same value
        ('{ "unit": "c", "city": "Oslo" }', False),
        ('{"city": "Bergen"}', False),
        ('{"city": "Oslo"', False),  # not JSON
        ({"city": "Oslo"}, False),  # an object, not the JSON text a tool call's arguments are
    ],
)
def test_json_equals_compares_parsed_values(value: Any, holds: bool) -> None:
    """Audit D14: tool-call arguments are judged as the JSON they spell, not as a literal copied from a cassette."""
    from harness.checks.matchers import match_values
    from harness.checks.refs import References

    ex = exchange("json/completion_text.json")
    matcher = {"json_equals": {"city": "Oslo"}}
    found = list(match_values(matcher, [value], check="json", path="x", refs=References(ex)))
    assert (not found) is holds, found


@pytest.mark.parametrize(
    ("values", "holds"),
    [
        (["", '{"city":', ' "Oslo"}'], True),
        (["", '{"city": "Oslo"}'], False),  # two fragments merged into one
        (["", '{"ci', 'ty":', ' "Oslo"}'], False),  # one split in two
        (['{"city":', "", ' "Oslo"}'], False),  # out of order
        ([], False),
    ],
)
def test_in_order_compares_every_match_as_one_list(values: list[Any], holds: bool) -> None:
    """`in_order`: each fragment forwarded as the provider streamed it (the relay rule that copied fragment
    literals from a cassette broke when the cassette was re-recorded)."""
    from harness.checks.matchers import match_values
    from harness.checks.refs import References

    ex = exchange("json/completion_text.json")
    matcher = {"in_order": ["", '{"city":', ' "Oslo"}']}
    found = list(match_values(matcher, values, check="chunks", path="x", refs=References(ex)))
    assert (not found) is holds, found


@pytest.mark.parametrize(
    ("expected", "status", "holds"),
    [("4xx", 403, True), ("4xx", 500, False), (["4xx", 200], 200, True), (400, 400, True)],
)
def test_status_classes(expected: Any, status: int, holds: bool) -> None:
    ex = dataclasses.replace(
        exchange("json/completion_text.json"),
        response=dataclasses.replace(exchange("json/completion_text.json").response, status=status),
    )
    assert (not list(check_for("status", CHAT)(expected, ex))) is holds
