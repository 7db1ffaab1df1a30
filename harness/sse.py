"""The harness's own strict Server-Sent Events decoder: bytes in, events, comments and problems out.

Pure and forgiving in what it returns, strict in what it reports: garbage never raises, it becomes a
`Problem`. Shares no code with any gateway (a gateway bug must not hide behind a shared decoder).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

KNOWN_FIELDS = frozenset({"data", "event", "id", "retry"})

ProblemKind = Literal[
    "bom",  # a leading UTF-8 byte order mark (allowed by the SSE spec, sent by no OpenAI server)
    "cr_line_ending",  # a lone CR ends a line: legal SSE, but not what OpenAI SDK decoders split on
    "invalid_utf8",
    "nul_byte",
    "no_colon",  # a line that is neither a comment nor `field: value` (e.g. a bare `[DONE]`)
    "unknown_field",
    "bad_retry",
    "unterminated",  # the body ended inside an event (no blank line after it)
]


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    offset: int  # byte offset of the offending line
    message: str
    event: int | None = None  # index of the event the line belongs to, when it is one


@dataclass(frozen=True)
class Event:
    index: int
    offset: int  # byte offset of the event's first line
    data: str | None  # `data` lines joined with "\n"; None when the event had no `data` field
    event: str | None = None
    id: str | None = None
    retry: str | None = None
    # Every field in order, as (name, value): repeated and unknown fields included, for evidence.
    fields: tuple[tuple[str, str], ...] = ()
    terminated: bool = True  # False for a last event the body did not end with a blank line


@dataclass(frozen=True)
class Comment:
    offset: int
    text: str  # after the leading ":" with one optional space removed
    before_event: int  # index of the next event to be dispatched (== number of events before it)


@dataclass(frozen=True)
class SseStream:
    events: tuple[Event, ...] = ()
    comments: tuple[Comment, ...] = ()
    problems: tuple[Problem, ...] = ()
    extra_blank_lines: int = 0  # blank lines with no pending event (harmless, counted)


@dataclass
class _Pending:
    offset: int
    fields: list[tuple[str, str]]


def _split_lines(raw: bytes) -> list[tuple[int, bytes, bytes]]:
    """(offset, line, terminator) for each line; terminator b"" for a final unterminated line."""
    lines: list[tuple[int, bytes, bytes]] = []
    start = 0
    i = 0
    n = len(raw)
    while i < n:
        byte = raw[i]
        if byte == 0x0A:  # \n
            lines.append((start, raw[start:i], b"\n"))
            i += 1
            start = i
        elif byte == 0x0D:  # \r, alone or as \r\n
            if i + 1 < n and raw[i + 1] == 0x0A:
                lines.append((start, raw[start:i], b"\r\n"))
                i += 2
            else:
                lines.append((start, raw[start:i], b"\r"))
                i += 1
            start = i
        else:
            i += 1
    if start < n:
        lines.append((start, raw[start:], b""))
    return lines


class _Decoder:
    """The state of one decode: events so far, the event being read, comments and problems."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.comments: list[Comment] = []
        self.problems: list[Problem] = []
        self.blank = 0
        self.pending: _Pending | None = None

    def problem(self, kind: ProblemKind, offset: int, message: str) -> None:
        self.problems.append(Problem(kind, offset, message, len(self.events)))

    def dispatch(self, terminated: bool) -> None:
        pending = self.pending
        assert pending is not None
        if not terminated:
            self.problem(
                "unterminated", pending.offset, "the body ends inside an event (no blank line after it)"
            )
        values: dict[str, list[str]] = {}
        for name, value in pending.fields:
            values.setdefault(name, []).append(value)
        self.events.append(
            Event(
                index=len(self.events),
                offset=pending.offset,
                data="\n".join(values["data"]) if "data" in values else None,
                # Like the SSE spec, the last `event`/`id`/`retry` of an event wins.
                event=values["event"][-1] if "event" in values else None,
                id=values["id"][-1] if "id" in values else None,
                retry=values["retry"][-1] if "retry" in values else None,
                fields=tuple(pending.fields),
                terminated=terminated,
            )
        )
        self.pending = None

    def line(self, offset: int, line_bytes: bytes, terminator: bytes) -> None:
        if terminator == b"\r":
            self.problem("cr_line_ending", offset, "line ends with a lone CR")
        try:
            line = line_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.problem("invalid_utf8", offset + exc.start, f"invalid UTF-8: {exc.reason}")
            line = line_bytes.decode("utf-8", errors="replace")
        if "\x00" in line:
            self.problem("nul_byte", offset, "line holds a NUL byte")
        if line == "":
            if self.pending is None:
                self.blank += 1
            else:
                self.dispatch(terminated=True)
        elif line.startswith(":"):
            text = line[1:]
            self.comments.append(
                Comment(offset, text[1:] if text.startswith(" ") else text, len(self.events))
            )
        else:
            self.field(offset, line)

    def field(self, offset: int, line: str) -> None:
        if ":" in line:
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name not in KNOWN_FIELDS:
                self.problem("unknown_field", offset, f"unknown SSE field {_short(name)}")
        else:
            name, value = line, ""
            self.problem("no_colon", offset, f"line without a colon: {_short(line)}")
        if name == "retry" and not value.isdigit():
            self.problem("bad_retry", offset, f"retry value is not digits: {_short(value)}")
        if self.pending is None:
            self.pending = _Pending(offset, [])
        self.pending.fields.append((name, value))


def decode(raw: bytes) -> SseStream:
    """Decode a whole SSE body. Never raises; everything odd is reported in `problems`."""
    d = _Decoder()
    body, base = raw, 0
    if body.startswith(b"\xef\xbb\xbf"):
        d.problem("bom", 0, "body starts with a UTF-8 byte order mark")
        body, base = body[3:], 3
    for offset, line_bytes, terminator in _split_lines(body):
        d.line(offset + base, line_bytes, terminator)
    if d.pending is not None:
        d.dispatch(terminated=False)
    return SseStream(tuple(d.events), tuple(d.comments), tuple(d.problems), d.blank)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
