"""An incremental `text/event-stream` decoder for what providers send (pure): bytes in as they arrive, the
complete events so far out. The stream translators of every family are fed its events."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSentEvent:
    event: str | None
    data: str


class SSEDecoder:
    """Incremental `text/event-stream` decoder: feed bytes as they arrive, get the complete events so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        # The complete lines of this chunk are decoded and split at once (a `\n` never falls inside a UTF-8
        # sequence, so this is line-by-line decoding's text); the unfinished last line waits for the next.
        end = chunk.rfind(b"\n")
        if end < 0:
            self._buffer += chunk
            return []
        block = bytes(self._buffer) + chunk[:end] if self._buffer else chunk[:end]
        self._buffer = bytearray(chunk[end + 1 :])
        events: list[ServerSentEvent] = []
        for raw in block.decode("utf-8", errors="replace").split("\n"):
            line = raw.rstrip("\r")
            if not line:
                if self._data:
                    events.append(ServerSentEvent(self._event, "\n".join(self._data)))
                self._event, self._data = None, []
            elif line[0] == ":":
                continue
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value[:1] == " " else value
                if name == "event":
                    self._event = value
                elif name == "data":
                    self._data.append(value)
        return events
