"""The non-stream answer a provider would have given for the generation a recorded stream shows.

A stream/non-stream pair of a cassette must be one generation: a model answers two requests differently, so
rules that compare the two variants (`stream_matches_nonstream`) would judge the model, not the gateway. `record`
therefore records the stream only and derives the non-stream answer from it, per family:

- Anthropic: `message_start`'s message, each block assembled from its deltas (text, thinking and signature,
  `input_json_delta` parsed into `input`, citations), `message_delta`'s stop fields and usage merged in.
- OpenAI-compatible: the chunks assembled into one `chat.completion` (content and any other text field joined,
  tool calls grouped by index), the usage chunk's usage (the stream is recorded with `include_usage`).
- Gemini: the events' parts concatenated (adjacent text parts of one kind joined), the last finish reason and
  usage metadata.
- OpenAI Responses: the terminal event's (`response.completed`, `.incomplete`, `.failed`) `response`: the API
  sends the whole Response there, the one a non-stream request is answered with.

Pure: bytes in, bytes out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from harness import sse
from harness.cassette.bodies import parse_json_body
from harness.cassette.document import Interaction, RecordedRequest, RecordedResponse
from harness.errors import DeriveError
from harness.families import EndpointKind

JSON_TYPES: Mapping[str, str] = {
    "anthropic.messages": "application/json",
    "openai.chat": "application/json",
    "openai.responses": "application/json",
    "gemini.generate": "application/json; charset=UTF-8",
}


def _payloads(body: bytes) -> Iterable[Any]:
    for event in sse.decode(body).events:
        data = (event.data or "").strip()
        if not data or data == "[DONE]":
            continue
        try:
            yield json.loads(data)
        except ValueError as exc:
            raise DeriveError(f"a stream event is not JSON: {data[:60]!r}") from exc


def anthropic_message(body: bytes) -> dict[str, Any]:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for data in _payloads(body):
        kind = data.get("type")
        index = data.get("index")
        if kind == "message_start":
            message = dict(data["message"])
            message["usage"] = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            blocks[index] = dict(data["content_block"])
        elif kind == "content_block_delta":
            _apply_delta(blocks[index], data["delta"], partial, index)
        elif kind == "content_block_stop" and index in partial:
            blocks[index]["input"] = json.loads(partial.pop(index) or "{}")
        elif kind == "message_delta":
            message.update(data.get("delta") or {})
            message["usage"].update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
    if not message or message.get("stop_reason") is None:
        raise DeriveError("the stream has no message_start or no stop_reason")
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _apply_delta(
    block: dict[str, Any], delta: Mapping[str, Any], partial: dict[int, str], index: int
) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "input_json_delta":
        partial[index] = partial.get(index, "") + delta["partial_json"]
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta["citation"])


def openai_completion(body: bytes) -> dict[str, Any]:
    """The chat.completion a stream assembles to: each choice (by its `index`, so `n > 1` keeps every one) with
    its text fields joined, its tool-call fragments merged by index, its logprobs concatenated, its finish."""
    head: dict[str, Any] = {}
    states: dict[int, dict[str, Any]] = {}
    usage = None
    for chunk in _payloads(body):
        if not head:
            head = {k: v for k, v in chunk.items() if k not in ("choices", "usage", "object", "obfuscation")}
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            index = choice.get("index") if isinstance(choice.get("index"), int) else 0
            state = states.setdefault(
                index, {"message": {}, "texts": {}, "calls": {}, "finish": None, "lp": None}
            )
            state["finish"] = choice.get("finish_reason") or state["finish"]
            _merge_logprobs(state, choice.get("logprobs"))
            for key, value in (choice.get("delta") or {}).items():
                if key == "tool_calls":
                    _merge_calls(state["calls"], value)
                elif key == "role":
                    state["message"]["role"] = value
                elif isinstance(value, str):
                    state["texts"].setdefault(key, []).append(value)
                else:
                    state["message"].setdefault(key, value)  # a field the stream only ever sends as null
    if not states or any(state["finish"] is None for state in states.values()):
        raise DeriveError("the stream has no finish_reason")
    choices = []
    for index in sorted(states):
        state = states[index]
        message = state["message"]
        message.setdefault("role", "assistant")
        message.update({key: "".join(parts) for key, parts in state["texts"].items()})
        message.setdefault("content", None)
        if state["calls"]:
            message["tool_calls"] = [state["calls"][i] for i in sorted(state["calls"])]
        choices.append(
            {"index": index, "message": message, "logprobs": state["lp"], "finish_reason": state["finish"]}
        )
    return {**head, "object": "chat.completion", "choices": choices, "usage": usage}


def _merge_logprobs(state: dict[str, Any], logprobs: Any) -> None:
    """A stream's logprobs arrive per chunk (`content: [...]` of that chunk's tokens): the answer has them all."""
    if not isinstance(logprobs, dict):
        return
    merged = state["lp"] if state["lp"] is not None else {}
    for key, value in logprobs.items():
        if isinstance(value, list):
            merged.setdefault(key, []).extend(value)
        else:
            merged.setdefault(key, value)
    state["lp"] = merged


def _merge_calls(calls: dict[int, dict[str, Any]], fragments: Any) -> None:
    for fragment in fragments or []:
        call = calls.setdefault(
            fragment.get("index", 0),
            {"id": None, "type": "function", "function": {"name": None, "arguments": ""}},
        )
        if fragment.get("id"):
            call["id"] = fragment["id"]
        function = fragment.get("function") or {}
        if function.get("name"):
            call["function"]["name"] = function["name"]
        call["function"]["arguments"] += function.get("arguments") or ""


def gemini_response(body: bytes) -> dict[str, Any]:
    events = list(_payloads(body))
    if not events:
        raise DeriveError("the stream has no events")
    parts: list[dict[str, Any]] = []
    candidate: dict[str, Any] = {}
    for event in events:
        for cand in event.get("candidates") or []:
            candidate.update({k: v for k, v in cand.items() if k != "content"})
            for part in (cand.get("content") or {}).get("parts") or []:
                last = parts[-1] if parts else None
                if last is not None and _joinable(last, part):
                    last["text"] += part["text"]
                else:
                    parts.append(dict(part))
    if "finishReason" not in candidate:
        raise DeriveError("the stream has no finishReason")
    candidate["content"] = {"parts": parts, "role": "model"}
    answer = {k: v for k, v in events[0].items() if k != "candidates"}
    answer.update({k: v for k, v in events[-1].items() if k != "candidates"})
    return {"candidates": [{"content": candidate.pop("content"), **candidate}], **answer}


def _joinable(last: Mapping[str, Any], part: Mapping[str, Any]) -> bool:
    texts = isinstance(last.get("text"), str) and isinstance(part.get("text"), str)
    return texts and set(last) == set(part) and last.get("thought") == part.get("thought")


def responses_response(body: bytes) -> dict[str, Any]:
    for payload in _payloads(body):
        if isinstance(payload, dict) and payload.get("type") in (
            "response.completed",
            "response.incomplete",
            "response.failed",
        ):
            response = payload.get("response")
            if isinstance(response, dict):
                return response
    raise DeriveError("the Responses stream has no terminal event with its response")


_DERIVE = {
    "anthropic.messages": anthropic_message,
    "openai.chat": openai_completion,
    "openai.responses": responses_response,
    "gemini.generate": gemini_response,
}


def nonstream_request(
    stream_request: RecordedRequest, body: Mapping[str, Any], kind: EndpointKind
) -> RecordedRequest:
    """The non-stream request the derived answer stands for: the stream's, with `stream: false` (or Gemini's
    `:generateContent` path)."""
    uri = stream_request.uri
    if kind == "gemini.generate":
        uri = uri.split("?", 1)[0].replace(":streamGenerateContent", ":generateContent")
        sent = dict(body)
    else:
        sent = {k: v for k, v in body.items() if k != "stream_options"} | {"stream": False}
    raw = json.dumps(sent, separators=(",", ":"), ensure_ascii=False).encode()
    return replace(
        stream_request, uri=uri, path=urlsplit(uri).path or "/", body=raw, json=parse_json_body(raw)
    )


def derive_nonstream(stream: Interaction, body: Mapping[str, Any], kind: EndpointKind) -> Interaction:
    """The non-stream interaction of the generation `stream` recorded (raises DeriveError)."""
    if not stream.response.is_sse or not 200 <= stream.response.status < 300:
        raise DeriveError("the stream interaction is not a successful event stream")
    answer = _DERIVE[kind](stream.response.body)
    headers = {k: v for k, v in stream.response.headers.items() if k not in ("content-type", "cache-control")}
    response = RecordedResponse(
        status=stream.response.status,
        message=stream.response.message,
        headers={"content-type": (JSON_TYPES[kind],), **headers},
        body=json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode(),
    )
    return Interaction(request=nonstream_request(stream.request, body, kind), response=response)
