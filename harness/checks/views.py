"""Read-only views of a gateway's answer: its JSON, its SSE events and chunks, the assembled completion.

Every function tolerates garbage (wrong types, truncated streams): it returns what it can and says
what it could not, so checks can turn that into violations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from harness import sse
from harness.exchange import Exchange, ReceivedResponse

DONE: Final = "[DONE]"


@dataclass(frozen=True)
class Parsed:
    """A JSON parse: `ok` with `value`, or not ok with `error`."""

    ok: bool
    value: Any = None
    error: str | None = None


def parse_json(raw: bytes | str) -> Parsed:
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return Parsed(True, json.loads(text))
    except UnicodeDecodeError as exc:
        return Parsed(False, error=f"not UTF-8: {exc.reason}")
    except (ValueError, RecursionError) as exc:
        return Parsed(False, error=f"not JSON: {exc}")


def content_type(response: ReceivedResponse) -> str:
    return response.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def requested_stream(exchange: Exchange) -> bool:
    """Whether this run asked for a stream: the variant's `stream`, else the body the harness sent."""
    if "stream" in exchange.variant:
        return exchange.variant["stream"] is True
    body = exchange.request.json
    return isinstance(body, Mapping) and body.get("stream") is True


def requested_usage(exchange: Exchange) -> bool:
    """Whether the sent body set `stream_options.include_usage: true`."""
    body = exchange.request.json
    if not isinstance(body, Mapping):
        return False
    options = body.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


def is_stream(response: ReceivedResponse) -> bool:
    """An SSE answer: by content type, or (for gateways that mislabel it) by a body that looks like SSE."""
    if content_type(response) == "text/event-stream":
        return True
    head = response.raw.lstrip()[:16]
    looks_sse = head.startswith((b"data:", b":", b"event:", b"id:", b"retry:"))
    return looks_sse and not parse_json(response.raw).ok


@dataclass(frozen=True)
class Payload:
    """One SSE event's `data`, decoded: `[DONE]`, a JSON value, or garbage."""

    event: sse.Event
    done: bool = False
    parsed: Parsed | None = None  # None for [DONE] and for events without data

    @property
    def json(self) -> Any:
        return self.parsed.value if self.parsed is not None and self.parsed.ok else None

    @property
    def is_object(self) -> bool:
        return self.parsed is not None and self.parsed.ok and isinstance(self.parsed.value, dict)

    @property
    def is_error(self) -> bool:
        """A `data: {"error": …}` event (the OpenAI way of failing mid-stream)."""
        return self.is_object and "error" in self.parsed.value and "choices" not in self.parsed.value  # type: ignore[union-attr]

    @property
    def is_chunk(self) -> bool:
        return self.is_object and not self.is_error


@dataclass(frozen=True)
class StreamView:
    decoded: sse.SseStream
    payloads: tuple[Payload, ...]

    @property
    def chunks(self) -> list[Any]:
        """The decoded `data:` JSON payloads, `[DONE]` and undecodable ones excluded (the `chunks` check's list)."""
        return [p.json for p in self.payloads if p.parsed is not None and p.parsed.ok]

    @property
    def completion_chunks(self) -> list[dict[str, Any]]:
        """JSON objects that are chunks (not error events)."""
        return [p.json for p in self.payloads if p.is_chunk]

    @property
    def error_payloads(self) -> list[Payload]:
        return [p for p in self.payloads if p.is_error]


def stream_view(raw: bytes) -> StreamView:
    decoded = sse.decode(raw)
    payloads: list[Payload] = []
    for event in decoded.events:
        if event.data is None:
            payloads.append(Payload(event))
        elif event.data == DONE:
            payloads.append(Payload(event, done=True))
        else:
            payloads.append(Payload(event, parsed=parse_json(event.data)))
    return StreamView(decoded, tuple(payloads))


def usage_of_chunks(chunks: Sequence[Any]) -> Any:
    """The usage a stream reported: its `choices: []` usage chunk; failing that, the last usage on any chunk.

    The fallback lets usage math be judged apart from usage placement (`stream_order` judges that).
    """
    usage_chunks = [
        c
        for c in chunks
        if isinstance(c, dict) and c.get("choices") == [] and isinstance(c.get("usage"), dict)
    ]
    if usage_chunks:
        return usage_chunks[-1]["usage"]
    for chunk in reversed(chunks):
        if isinstance(chunk, dict) and isinstance(chunk.get("usage"), dict):
            return chunk["usage"]
    return None


def assemble(chunks: Sequence[Any]) -> dict[str, Any]:
    """The completion a client accumulates from chunks (specs/README.md, "The assembled completion")."""
    objects = [c for c in chunks if isinstance(c, dict)]
    first = objects[0] if objects else {}
    choices: dict[Any, dict[str, Any]] = {}
    for chunk in objects:
        raw_choices = chunk.get("choices")
        if not isinstance(raw_choices, list):
            continue
        for position, choice in enumerate(raw_choices):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool):
                index = position
            state = choices.setdefault(index, _new_choice(index))
            _accumulate(state, choice)
    return {
        "id": first.get("id"),
        "object": first.get("object"),
        "created": first.get("created"),
        "model": first.get("model"),
        "choices": [_finish_choice(choices[i]) for i in sorted(choices)],
        "usage": usage_of_chunks(objects),
    }


def _new_choice(index: int) -> dict[str, Any]:
    return {
        "index": index,
        "role": None,
        "content": [],
        "refusal": [],
        "calls": {},
        "finish": [],
        "extra": {},
    }


# Delta fields with their own assembly; any other string field (a gateway extension such as
# `reasoning_content`) is concatenated into the assembled message under its own name.
_DELTA_FIELDS = frozenset({"role", "content", "refusal", "tool_calls", "function_call", "audio"})


def _accumulate(state: dict[str, Any], choice: Mapping[str, Any]) -> None:
    finish = choice.get("finish_reason")
    if finish is not None:
        state["finish"].append(finish)
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return
    if state["role"] is None and delta.get("role") is not None:
        state["role"] = delta["role"]
    if isinstance(delta.get("content"), str):
        state["content"].append(delta["content"])
    if isinstance(delta.get("refusal"), str):
        state["refusal"].append(delta["refusal"])
    for key, value in delta.items():
        if key not in _DELTA_FIELDS and isinstance(value, str):
            state["extra"].setdefault(key, []).append(value)
    calls = delta.get("tool_calls")
    if not isinstance(calls, list):
        return
    for position, fragment in enumerate(calls):
        if not isinstance(fragment, dict):
            continue
        index = fragment.get("index")
        key = index if isinstance(index, int) and not isinstance(index, bool) else f"?{position}"
        call = state["calls"].setdefault(key, {"id": None, "type": None, "name": None, "pieces": []})
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        if call["id"] is None and fragment.get("id") is not None:
            call["id"] = fragment["id"]
        if call["type"] is None and fragment.get("type") is not None:
            call["type"] = fragment["type"]
        if call["name"] is None and function.get("name") is not None:
            call["name"] = function["name"]
        if function.get("arguments") is not None:
            call["pieces"].append(function["arguments"])


def _finish_choice(state: Mapping[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": state["role"],
        "content": "".join(state["content"]) if state["content"] else None,
        "refusal": "".join(state["refusal"]) if state["refusal"] else None,
    }
    for key, pieces in state["extra"].items():
        message.setdefault(key, "".join(pieces))
    if state["calls"]:
        ordered = sorted(state["calls"].items(), key=lambda kv: (isinstance(kv[0], str), str(kv[0]).zfill(9)))
        message["tool_calls"] = [
            {
                "index": key if isinstance(key, int) else None,
                "id": call["id"],
                "type": call["type"],
                "function": {"name": call["name"], "arguments": _join_arguments(call["pieces"])},
            }
            for key, call in ordered
        ]
    # `""` on intermediate chunks is a bug `stream_order` reports; the assembled reason is the real one.
    reasons = state["finish"]
    real = [r for r in reasons if r != ""]
    return {
        "index": state["index"],
        "message": message,
        "logprobs": None,
        "finish_reason": real[0] if real else (reasons[0] if reasons else None),
    }


def _join_arguments(pieces: Sequence[Any]) -> Any:
    if all(isinstance(p, str) for p in pieces):
        return "".join(pieces)
    # A gateway that sends arguments as an object: keep what it sent so `type: string` assertions fail.
    return pieces[0] if len(pieces) == 1 else list(pieces)


@dataclass(frozen=True)
class GatewayAnswer:
    """The gateway's answer as one JSON document: the body, or the assembled stream."""

    stream: bool
    document: Any  # the JSON body or the assembled completion; None when the body is not JSON
    error: str | None = None  # why there is no document
    view: StreamView | None = None


def gateway_answer(exchange: Exchange) -> GatewayAnswer:
    response = exchange.response
    if is_stream(response):
        view = stream_view(response.raw)
        return GatewayAnswer(True, assemble(view.completion_chunks), view=view)
    if response.status is None and not response.raw:
        return GatewayAnswer(
            False, None, error=f"no response ({response.transport_error or 'nothing received'})"
        )
    parsed = parse_json(response.raw)
    if not parsed.ok:
        return GatewayAnswer(False, None, error=f"body is {parsed.error}")
    return GatewayAnswer(False, parsed.value)


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for reading garbage without type errors)."""
    return value if isinstance(value, dict) else {}


def first_choice(document: Any) -> Any:
    """`choices[0]` of a completion, or None when the document has no such thing."""
    if isinstance(document, dict):
        choices = document.get("choices")
        if isinstance(choices, list) and choices:
            return choices[0]
    return None
