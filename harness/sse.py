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


def decode(raw: bytes) -> SseStream:
    """Decode a whole SSE body. Never raises; everything odd is reported in `problems`."""
    events: list[Event] = []
    comments: list[Comment] = []
    problems: list[Problem] = []
    blank = 0
    pending: _Pending | None = None

    body = raw
    base = 0
    if body.startswith(b"\xef\xbb\xbf"):
        problems.append(Problem("bom", 0, "body starts with a UTF-8 byte order mark"))
        body = body[3:]
        base = 3

    def dispatch(terminated: bool) -> None:
        nonlocal pending
        assert pending is not None
        index = len(events)
        if not terminated:
            problems.append(
                Problem(
                    "unterminated",
                    pending.offset,
                    "the body ends inside an event (no blank line after it)",
                    index,
                )
            )
        values: dict[str, list[str]] = {}
        for name, value in pending.fields:
            values.setdefault(name, []).append(value)
        events.append(
            Event(
                index=index,
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
        pending = None

    for offset, line_bytes, terminator in _split_lines(body):
        offset += base
        if terminator == b"\r":
            problems.append(Problem("cr_line_ending", offset, "line ends with a lone CR", len(events)))
        try:
            line = line_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                Problem("invalid_utf8", offset + exc.start, f"invalid UTF-8: {exc.reason}", len(events))
            )
            line = line_bytes.decode("utf-8", errors="replace")
        if "\x00" in line:
            problems.append(Problem("nul_byte", offset, "line holds a NUL byte", len(events)))

        if line == "":
            if pending is None:
                blank += 1
            else:
                dispatch(terminated=True)
            continue
        if line.startswith(":"):
            text = line[1:]
            comments.append(Comment(offset, text[1:] if text.startswith(" ") else text, len(events)))
            continue

        if ":" in line:
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
            problems.append(Problem("no_colon", offset, f"line without a colon: {_short(line)}", len(events)))
        if name not in KNOWN_FIELDS and ":" in line:
            problems.append(
                Problem("unknown_field", offset, f"unknown SSE field {_short(name)}", len(events))
            )
        if name == "retry" and not value.isdigit():
            problems.append(
                Problem("bad_retry", offset, f"retry value is not digits: {_short(value)}", len(events))
            )
        if pending is None:
            pending = _Pending(offset, [])
        pending.fields.append((name, value))

    if pending is not None:
        dispatch(terminated=False)
    return SseStream(tuple(events), tuple(comments), tuple(problems), blank)


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
