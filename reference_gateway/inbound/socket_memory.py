"""The responses one WebSocket remembers: its connection-local state (Open Responses specification, "WebSocket
Continuation"; OpenAI's WebSocket mode guide), which lets a `previous_response_id` continue on the open socket with
`store: false` too, where nothing is written to the store.

Each response made on the socket is kept here as the store keeps it (responses_state.py: the Response, the
conversation it ends as chat messages or Responses items, the request's input items), the most recent ones only.
A continuation looks here before the store; one that fails forgets the response it continued from, so a later
attempt from that `store: false` response is `previous_response_not_found` rather than a stale replay.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

KEPT = 16  # responses a socket remembers (a turn continues the latest; a client may fork an earlier one)


class Remembered:
    """The responses made on one socket, newest last."""

    def __init__(self, limit: int = KEPT) -> None:
        self._limit = limit
        self._records: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def recall(self, response_id: str) -> dict[str, Any] | None:
        return self._records.get(response_id)

    def remember(
        self,
        response: dict[str, Any],
        conversation: list[dict[str, Any]],
        items: list[Any] | None = None,
        inputs: list[Any] | None = None,
    ) -> None:
        """A response made on the socket, in the store's record form (responses_state.keep's arguments)."""
        record: dict[str, Any] = {"response": response, "conversation": conversation, "inputs": inputs or []}
        if items is not None:
            record["items"] = items
        key = str(response.get("id"))
        self._records[key] = record
        self._records.move_to_end(key)
        while len(self._records) > self._limit:
            self._records.popitem(last=False)

    def forget(self, response_id: str) -> None:
        self._records.pop(response_id, None)
