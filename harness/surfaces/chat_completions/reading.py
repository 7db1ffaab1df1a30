"""OpenAI Chat Completions read: what a stream's payloads mean (chunks, `data: {"error": …}` events, the `[DONE]`
sentinel), the completion a client accumulates from the chunks (specs/README.md, "The assembled completion"), the
usage a stream reported, and where a completion keeps its first choice. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from harness.exchange import Exchange
from harness.surfaces import reading
from harness.surfaces.reading import GatewayAnswer, Payload, StreamView

DONE: Final = "[DONE]"
# finish_reason values of the OpenAI SDK (wire-reference §2.3); no other value exists.
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")


def is_error(payload: Payload) -> bool:
    """A `data: {"error": …}` event (the OpenAI way of failing mid-stream)."""
    value = payload.json
    return payload.is_object and "error" in value and "choices" not in value


def carries_content(chunk: Any) -> bool:
    """A chunk that carries the answer itself (text, reasoning or a tool call's fragment), not only its framing
    (the role chunk, a finish reason, the usage): what `streamed` times."""
    if not isinstance(chunk, dict):
        return False
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict) and (
            delta.get("content") or delta.get("tool_calls") or delta.get("reasoning_content")
        ):
            return True
    return False


def is_chunk(payload: Payload) -> bool:
    return payload.is_object and not is_error(payload)


def completion_chunks(view: StreamView) -> list[dict[str, Any]]:
    """The JSON objects of a stream that are chunks (not error events)."""
    return [p.json for p in view.payloads if is_chunk(p)]


def error_payloads(view: StreamView) -> list[Payload]:
    return [p for p in view.payloads if is_error(p)]


def requested_usage(exchange: Exchange) -> bool:
    """Whether the sent body set `stream_options.include_usage: true`."""
    body = exchange.request.json
    if not isinstance(body, Mapping):
        return False
    options = body.get("stream_options")
    return isinstance(options, Mapping) and options.get("include_usage") is True


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


def first_choice(document: Any) -> Any:
    """`choices[0]` of a completion, or None when the document has no such thing."""
    if isinstance(document, dict):
        choices = document.get("choices")
        if isinstance(choices, list) and choices:
            return choices[0]
    return None


def assemble_view(view: StreamView) -> dict[str, Any]:
    """The completion a client accumulates from a stream's chunks."""
    return assemble(completion_chunks(view))


def answer_document(exchange: Exchange) -> GatewayAnswer:
    """The completion of an exchange: its JSON body, or its stream assembled."""
    return reading.answer(exchange, assemble_view, DONE)
