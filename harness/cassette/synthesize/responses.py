"""The synthesized cassettes of OpenAI's Responses API as a provider (`cassettes/responses/*.yaml`).

A gateway that passes `/v1/responses` through to OpenAI (LiteLLM does for OpenAI models), or serves another
surface from it, calls `POST https://api.openai.com/v1/responses`; these are its answers. Each is the
Responses form of the `openai/` cassette of the same name (harness/cassette/synthesize/openai.py): the same
text, tool calls, reasoning, stop and token counts, so a rule's cassette set says the same thing in every family.

The shapes follow OpenAI's API reference (Responses: the response object, output items, streaming events) and
openai-python 3.57's types (`Response`, `ResponseStreamEvent`): a non-stream answer is the Response object; a
stream is `event: <type>` / `data: <json>` pairs with `sequence_number` from 0 — `response.created`,
`response.in_progress`, per item `response.output_item.added`, its parts and deltas and their `.done` events,
`response.output_item.done`, then the terminal `response.completed` (or `response.incomplete`) holding the whole
Response. Text and argument deltas carry the `obfuscation` padding api.openai.com adds unless the request turns it
off. A reasoning item carries `encrypted_content` (what `include: ["reasoning.encrypted_content"]` returns, the
item a stateless client sends back). Errors are OpenAI's envelope, for both stream flags (the stream never starts).

Ids derive from the cassette name, so regenerating gives byte-identical files. Recorded requests carry no
credentials.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from harness.cassette.synthesize import openai
from harness.cassette.synthesize.common import Synthesized, ok_pair, rand, text_pieces

URI = "https://api.openai.com/v1/responses"
# The openai/ cassettes given a Responses form: every one a responses rule's cassette set names.
NAMES = (
    "text-basic",
    "long-text",
    "unicode-text",
    "length",
    "content-filter",
    "tool-call",
    "tool-call-parallel",
    "text-plus-tool",
    "reasoning-content",
    "error-400",
    "error-404",
    "error-context-length",
    "error-429",
    "error-500",
)
# Chat's finish_reason as a Response's status and incomplete_details.reason.
STATUS = {
    "stop": ("completed", None),
    "tool_calls": ("completed", None),
    "length": ("incomplete", "max_output_tokens"),
    "content_filter": ("incomplete", "content_filter"),
}
# The Responses API's own words for an over-long input (its `param` is `input`, not `messages`).
CONTEXT_ERROR = {
    "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
    "type": "invalid_request_error",
    "param": "input",
    "code": "context_length_exceeded",
}


def _id(name: str, prefix: str, salt: str) -> str:
    return f"{prefix}_" + rand(f"responses/{name}", salt, 40).lower()


def request(model: str, *, stream: bool, prompt: str) -> dict[str, Any]:
    body = {"model": openai.REQUESTED.get(model, model), "input": prompt, "stream": stream}
    return openai.posted(body, URI)


def usage(chat: dict[str, Any]) -> dict[str, Any]:
    prompt = chat["prompt_tokens_details"]
    completion = chat["completion_tokens_details"]
    return {
        "input_tokens": chat["prompt_tokens"],
        "input_tokens_details": {
            "cached_tokens": prompt["cached_tokens"],
            "cache_write_tokens": prompt.get("cache_write_tokens", 0),
        },
        "output_tokens": chat["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": completion["reasoning_tokens"]},
        "total_tokens": chat["prompt_tokens"] + chat["completion_tokens"],
    }


def _items(name: str, answer: dict[str, Any], status: str) -> list[dict[str, Any]]:
    """The output items, done: reasoning, then the message, then the function calls (as a model writes them)."""
    items: list[dict[str, Any]] = []
    reasoning = answer.get("reasoning_content") or answer.get("reasoning")
    if reasoning:
        # The summary only when asked for (`reasoning.summary`), encrypted_content only with `include`: the
        # answer's `summary` and `encrypted` flags (the cassettes show both).
        item: dict[str, Any] = {
            "id": _id(name, "rs", "reasoning"),
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "".join(reasoning)}]
            if answer.get("summary", True)
            else [],
        }
        if answer.get("encrypted", True):
            item["encrypted_content"] = "gAAAAB" + rand(f"responses/{name}", "encrypted", 120)
        items.append(item)
    if answer.get("content"):
        items.append(
            {
                "id": _id(name, "msg", "message"),
                "type": "message",
                "status": "completed" if status == "completed" else "incomplete",
                "content": [
                    {
                        "type": "output_text",
                        "annotations": [],
                        "logprobs": [],
                        "text": "".join(answer["content"]),
                    }
                ],
                "role": "assistant",
            }
        )
    for i, call in enumerate(answer.get("tool_calls") or ()):
        if "input" in call:  # a custom tool's call (openai-python 3.57 ResponseCustomToolCall)
            items.append(
                {
                    "id": _id(name, "ctc", f"call{i}"),
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call["id"],
                    "input": call["input"],
                    "name": call["name"],
                }
            )
            continue
        items.append(
            {
                "id": _id(name, "fc", f"call{i}"),
                "type": "function_call",
                "status": "completed",
                "arguments": "".join(call["pieces"]),
                "call_id": call["id"],
                "name": call["name"],
            }
        )
    return items


# The request parameters a Response object repeats (the API reference's Response object), when a request gave them.
ECHOED = (
    "instructions", "max_output_tokens", "metadata", "parallel_tool_calls", "previous_response_id", "store",
    "temperature", "top_p", "tool_choice", "tools", "text", "truncation", "safety_identifier", "prompt_cache_key",
)  # fmt: skip


def response(
    name: str, model: str, answer: dict[str, Any], *, done: bool = True, echo: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The Response object: in progress and empty (`done` false: what `response.created` carries) or finished;
    `echo`: the request, whose parameters the object repeats."""
    status, reason = STATUS[answer["finish"]]
    repeated = {k: v for k, v in (echo or {}).items() if k in ECHOED and v is not None}
    if isinstance((echo or {}).get("reasoning"), dict):
        repeated["reasoning"] = {"effort": None, "summary": None, **echo["reasoning"]}  # type: ignore[index]
    base = {
        "id": _id(name, "resp", "id"),
        "object": "response",
        "created_at": openai.CREATED,
        "status": status if done else "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": {"reason": reason} if done and reason else None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": model,
        "output": _items(name, answer, status) if done else [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "reasoning": {"effort": "medium" if answer.get("reasoning_content") else None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage(answer["usage"]) if done else None,
        "user": None,
        "metadata": {},
    }
    return base | repeated


def events(
    name: str, model: str, answer: dict[str, Any], echo: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The stream of one answer, each event with its `type` and `sequence_number` (in order from 0)."""
    out: list[dict[str, Any]] = []
    pad = itertools.count()

    def emit(kind: str, **fields: Any) -> None:
        out.append({"type": kind, "sequence_number": len(out), **fields})

    def padding() -> str:
        n = next(pad)
        return rand(f"responses/{name}", f"ob{n}", 2 + (n * 7) % 13)

    final = response(name, model, answer, echo=echo)
    emit("response.created", response=response(name, model, answer, done=False, echo=echo))
    emit("response.in_progress", response=response(name, model, answer, done=False, echo=echo))
    for index, item in enumerate(final["output"]):
        kind = item["type"]
        if kind == "reasoning":
            emit("response.output_item.added", output_index=index, item={**item, "summary": []})
            if not item["summary"]:
                emit("response.output_item.done", output_index=index, item=item)
                continue
            part = {"type": "summary_text", "text": ""}
            emit("response.reasoning_summary_part.added", item_id=item["id"], output_index=index, summary_index=0, part=part)  # fmt: skip
            pieces = answer.get("reasoning_content") or answer.get("reasoning") or ()
            for piece in pieces:
                emit("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index, summary_index=0, delta=piece, obfuscation=padding())  # fmt: skip
            text = item["summary"][0]["text"]
            emit("response.reasoning_summary_text.done", item_id=item["id"], output_index=index, summary_index=0, text=text)  # fmt: skip
            emit("response.reasoning_summary_part.done", item_id=item["id"], output_index=index, summary_index=0, part={**part, "text": text})  # fmt: skip
        elif kind == "message":
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})  # fmt: skip
            empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=empty)  # fmt: skip
            for piece in answer["content"]:
                emit("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=piece, logprobs=[], obfuscation=padding())  # fmt: skip
            text = item["content"][0]["text"]
            emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=text, logprobs=[])  # fmt: skip
            emit("response.content_part.done", item_id=item["id"], output_index=index, content_index=0, part=item["content"][0])  # fmt: skip
        elif kind == "custom_tool_call":  # its input as deltas, then done (ResponseCustomToolCallInput*Event)
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "input": ""})  # fmt: skip
            call = answer["tool_calls"][index - (len(final["output"]) - len(answer["tool_calls"]))]
            for piece in text_pieces(call["input"]):
                emit("response.custom_tool_call_input.delta", item_id=item["id"], output_index=index, delta=piece, obfuscation=padding())  # fmt: skip
            emit("response.custom_tool_call_input.done", item_id=item["id"], output_index=index, input=item["input"])  # fmt: skip
        else:  # function_call
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "arguments": ""})  # fmt: skip
            call = answer["tool_calls"][index - (len(final["output"]) - len(answer["tool_calls"]))]
            for piece in call["pieces"]:
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=piece, obfuscation=padding())  # fmt: skip
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index, name=item["name"], arguments=item["arguments"])  # fmt: skip
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed" if final["status"] == "completed" else "response.incomplete", response=final)
    return out


def _failed_stream(model: str, error: dict[str, Any]) -> list[dict[str, Any]]:
    """What api.openai.com streams for a request it takes and then fails before any output (an input over the
    context window: openai/codex#2921, #3924 quote it): response.created, response.in_progress, then
    response.failed carrying the error's code and message, `output` empty."""
    answer = _chat_answer("text-basic")
    assert answer is not None
    shell = response("error-context-length", model, answer, done=False)
    failed = {**shell, "status": "failed", "output": [], "usage": None,
              "error": {"code": error["code"], "message": error["message"]}}  # fmt: skip
    return [
        {"type": "response.created", "sequence_number": 0, "response": shell},
        {"type": "response.in_progress", "sequence_number": 1, "response": shell},
        {"type": "response.failed", "sequence_number": 2, "response": failed},
    ]


def sse(payloads: list[dict[str, Any]]) -> str:
    return "".join(f"event: {p['type']}\ndata: {openai.dumps(p)}\n\n" for p in payloads)


def _headers(name: str, i: int, *, sse_: bool, status: int = 200) -> dict[str, list[str]]:
    h = openai.headers(f"responses/{name}", i, sse=sse_)
    if status != 200:
        h = {"content-type": ["application/json"], "x-request-id": h["x-request-id"]}
    return h


def cassettes() -> list[Synthesized]:
    chat = openai.openai_catalogue()
    out = []
    for name in NAMES:
        model, description, source, interactions = chat[name]
        answer = _chat_answer(name)
        if answer is None:  # an error: the chat cassette's envelope, in Responses' words where they differ
            pair = []
            for i, it in enumerate(interactions):
                stream = '"stream":true' in it["request"]["body"]
                body = it["response"]["body"]["string"]
                status = it["response"]["status"]
                headers = {
                    **it["response"]["headers"],
                    **_headers(name, i, sse_=False, status=status["code"]),
                }
                if name == "error-context-length":
                    body = openai.dumps({"error": CONTEXT_ERROR})
                    # a stream OpenAI has started: 200, then response.failed with the code (audit D5)
                    if stream:
                        body = sse(_failed_stream(model, CONTEXT_ERROR))
                        status = {"code": 200, "message": "OK"}
                        headers = _headers(name, i, sse_=True)
                pair.append(
                    {
                        "request": request(model, stream=stream, prompt="[gc] error case"),
                        "response": {"body": {"string": body}, "headers": headers, "status": status},
                    }
                )
            description = description + " (Responses: the same envelope on /v1/responses)"
        else:
            prompt = json.loads(interactions[0]["request"]["body"])["messages"][0]["content"]
            pair = ok_pair(
                (request(model, stream=False, prompt=prompt), request(model, stream=True, prompt=prompt)),
                (openai.dumps(response(name, model, answer)), sse(events(name, model, answer))),
                (_headers(name, 0, sse_=False), _headers(name, 1, sse_=True)),
            )
            description = f"The Responses form of openai/{name}: {description}"
        out.append(
            Synthesized(
                f"responses/{name}",
                {
                    "origin": "synthesized",
                    "date": "2026-12-04",
                    "provider": "responses",
                    "model": model,
                    "description": description,
                    "source": "OpenAI API reference: Responses (create, the response object, streaming events, "
                    f"errors); openai-python 3.57 types; from openai/{name} ({source})",
                },
                pair,
            )
        )
    return out


def _chat_answer(name: str) -> dict[str, Any] | None:
    """The answer dict the openai/ generator built `name` from (None: an error cassette)."""
    return ANSWERS.get(name)


def _answers() -> dict[str, dict[str, Any]]:
    # The chat catalogue keeps only wire interactions; its answers are rebuilt from the non-stream completion.
    found: dict[str, dict[str, Any]] = {}
    for name, (_model, _d, _s, interactions) in openai.openai_catalogue().items():
        if name not in NAMES or name.startswith("error-"):
            continue
        completion = json.loads(interactions[0]["response"]["body"]["string"])
        chunks = [
            json.loads(line[6:])
            for line in interactions[1]["response"]["body"]["string"].split("\n\n")
            if line.startswith("data: ") and line[6:] != "[DONE]"
        ]
        message = completion["choices"][0]["message"]
        answer: dict[str, Any] = {
            "finish": completion["choices"][0]["finish_reason"],
            "usage": completion["usage"],
        }
        for key in ("reasoning_content", "reasoning", "content"):
            pieces = [
                c["choices"][0]["delta"][key]
                for c in chunks
                if c["choices"] and c["choices"][0]["delta"].get(key)
            ]
            if pieces:
                answer[key] = pieces
        calls = []
        for i, call in enumerate(message.get("tool_calls") or ()):
            pieces = [
                t["function"]["arguments"]
                for c in chunks
                if c["choices"]
                for t in c["choices"][0]["delta"].get("tool_calls") or ()
                if t["index"] == i and t["function"].get("arguments")
            ]
            calls.append({"id": call["id"], "name": call["function"]["name"], "pieces": pieces})
        if calls:
            answer["tool_calls"] = calls
        found[name] = answer
    return found


ANSWERS = _answers()
