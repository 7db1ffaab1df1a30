"""The harness's strict SSE decoder: framing, fields, comments, and garbage turned into problems."""

from __future__ import annotations

import pytest

from harness.sse import decode


def test_events_fields_and_offsets() -> None:
    raw = b"data: a\ndata: b\n\nevent: x\nid: 7\nretry: 10\ndata: {}\n\n"
    stream = decode(raw)
    assert [e.data for e in stream.events] == ["a\nb", "{}"]
    second = stream.events[1]
    assert (second.index, second.offset, second.event, second.id, second.retry) == (1, 17, "x", "7", "10")
    assert second.fields == (("event", "x"), ("id", "7"), ("retry", "10"), ("data", "{}"))
    assert stream.problems == ()


def test_crlf_is_accepted_without_problems() -> None:
    stream = decode(b"data: a\r\n\r\ndata: [DONE]\r\n\r\n")
    assert [e.data for e in stream.events] == ["a", "[DONE]"]
    assert stream.problems == ()


def test_comments_keep_their_position() -> None:
    stream = decode(b": ping\n\ndata: 1\n\n:pong\n\ndata: 2\n\n")
    assert [(c.text, c.before_event) for c in stream.comments] == [("ping", 0), ("pong", 1)]
    assert stream.extra_blank_lines == 2


def test_value_keeps_all_but_one_leading_space() -> None:
    assert decode(b"data:x\n\ndata:  y\n\n").events[0].data == "x"
    assert decode(b"data:  y\n\n").events[0].data == " y"


def test_event_without_data() -> None:
    (event,) = decode(b"event: ping\n\n").events
    assert event.data is None and event.event == "ping"


PROBLEMS = [
    (b"data: a\n", "unterminated"),
    (b"data: a", "unterminated"),
    (b"data: a\r\r", "cr_line_ending"),
    (b"data: \xff\xfe\n\n", "invalid_utf8"),
    (b"[DONE]\n\n", "no_colon"),
    (b"error: boom\n\n", "unknown_field"),
    (b"retry: soon\n\n", "bad_retry"),
    (b"\xef\xbb\xbfdata: a\n\n", "bom"),
    (b"data: a\x00b\n\n", "nul_byte"),
]


@pytest.mark.parametrize(("raw", "kind"), PROBLEMS, ids=[p[1] + f"-{i}" for i, p in enumerate(PROBLEMS)])
def test_problems_are_reported(raw: bytes, kind: str) -> None:
    assert kind in [p.kind for p in decode(raw).problems]


def test_unterminated_last_event_is_still_decoded() -> None:
    stream = decode(b"data: 1\n\ndata: [DONE]\n")
    assert [e.data for e in stream.events] == ["1", "[DONE]"]
    assert [e.terminated for e in stream.events] == [True, False]


@pytest.mark.parametrize(
    "raw",
    [b"", b"\n\n\n", b"\x00\xff\r\r\n:::\n\n", bytes(range(256)), b"data" * 1000, b"<html>502</html>"],
    ids=["empty", "blank", "binary", "all-bytes", "no-newline", "html"],
)
def test_garbage_never_raises(raw: bytes) -> None:
    stream = decode(raw)
    assert isinstance(stream.problems, tuple)
