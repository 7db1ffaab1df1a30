"""The synthesized cassettes of the OpenAI-compatible family and LYRouter's fallbacks:

Two families, one script (the lyrouter catalog is their only user):

* `cassettes/openai/*.yaml` — OpenAI-compatible upstream answers (LYRouter's pass-through channels: OpenAI
  official, DashScope, DeepSeek, other providers), built from wire-reference.md §2.3 (chat.completion),
  §2.4 (usage), §2.5 (chat.completion.chunk, the usage chunk, `data: [DONE]`) and §2.7 (error envelope).
  Every response carries an `x-request-id` header (§2.1), ids are `chatcmpl-…`, streams are `data:` lines only.
* `cassettes/anthropic/lyrouter-*.yaml` — Anthropic answers built with the functions of
  harness/cassette/synthesize/anthropic.py, for fallback between channels (an error, then a
  success, per stream flag) and for usage and model shapes the shared catalogue does not have.

Each cassette holds a non-streaming and a streaming interaction; ids derive from the cassette name, so
regenerating gives byte-identical files. Recorded requests carry no credentials.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.cassette.synthesize.common import Synthesized, ok_pair, rand

DATE = "2026-11-29"
URI = "https://api.openai.com/v1/chat/completions"
CREATED = 1795953600


def _rand(name: str, salt: str, n: int) -> str:
    # The Anthropic generator's deterministic base-62 ids, under an "openai/" namespace.
    return rand(f"openai/{name}", salt, n)


def completion_id(name: str) -> str:
    return "chatcmpl-" + _rand(name, "id", 29)


def call_id(name: str, i: int) -> str:
    return "call_" + _rand(name, f"call{i}", 24)


def request_id(name: str, i: int) -> str:
    return "req_" + hashlib.sha256(f"openai/{name}/req{i}".encode()).hexdigest()[:32]


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Requests (what a pass-through channel sends; the replay matches only endpoint and stream flag)


# The id a client (and so the gateway) asks for; the upstream answers with its own, often dated, name.
REQUESTED = {"gpt-5.5-2026-09-18": "gpt-5.5", "kimi-k2-0905": "kimi-k2"}


def request(model: str, *, stream: bool, prompt: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": REQUESTED.get(model, model),
        "messages": [{"role": "user", "content": prompt}],
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    return posted(body, URI)


def posted(body: dict[str, Any], uri: str) -> dict[str, Any]:
    """A recorded JSON POST to `uri` (no credentials: the replay matches endpoint and stream flag only)."""
    return {
        "body": dumps(body),
        "headers": {
            "accept": ["application/json"],
            "content-type": ["application/json"],
            "user-agent": ["UA"],
        },
        "method": "POST",
        "uri": uri,
    }


# ---------------------------------------------------------------------------------------------
# Answers (§2.3-§2.5)


def headers(name: str, i: int, *, sse: bool, extra: dict[str, str] | None = None) -> dict[str, list[str]]:
    h = {
        "content-type": ["text/event-stream; charset=utf-8" if sse else "application/json"],
        "x-request-id": [request_id(name, i)],
        "openai-processing-ms": ["412"],
        "x-ratelimit-limit-requests": ["10000"],
        "x-ratelimit-remaining-requests": ["9999"],
        "x-ratelimit-limit-tokens": ["30000000"],
        "x-ratelimit-remaining-tokens": ["29998750"],
    }
    if sse:
        h["cache-control"] = ["no-cache"]
    for k, v in (extra or {}).items():
        h[k] = [v]
    return h


def completion(name: str, model: str, answer: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.get("content")}
    for key in ("reasoning_content", "reasoning"):
        if key in answer:
            message[key] = "".join(answer[key])
    if answer.get("content") is not None:
        message["content"] = "".join(answer["content"])
    message["refusal"] = None
    if answer.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": "".join(c["pieces"])},
            }
            for c in answer["tool_calls"]
        ]
    message["annotations"] = []
    body: dict[str, Any] = {
        "id": completion_id(name),
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": answer["finish"]}],
        "usage": answer["usage"],
        "service_tier": "default",
        "system_fingerprint": "fp_" + _rand(name, "fp", 10),
    }
    return body


def chunks(name: str, model: str, answer: dict[str, Any]) -> list[dict[str, Any]]:
    base = {
        "id": completion_id(name),
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_" + _rand(name, "fp", 10),
    }

    count = iter(range(1000))

    def padding() -> str:
        # `obfuscation`: random-length padding api.openai.com adds to every chunk unless the request sets
        # `stream_options.include_obfuscation: false` (wire-reference.md §2.5); deterministic here.
        n = next(count)
        return _rand(name, f"ob{n}", 2 + (n * 7) % 13)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": None,
            "obfuscation": padding(),
        }

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    for key in ("reasoning_content", "reasoning"):
        for piece in answer.get(key, ()):
            out.append(chunk({key: piece}))
    for piece in answer.get("content") or ():
        out.append(chunk({"content": piece}))
    for index, call in enumerate(answer.get("tool_calls") or ()):
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in call["pieces"]:
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, answer["finish"]))
    out.append({**base, "choices": [], "usage": answer["usage"], "obfuscation": padding()})
    return out


def sse(payloads: list[dict[str, Any]], *, done: bool = True) -> str:
    text = "".join(f"data: {dumps(p)}\n\n" for p in payloads)
    return text + ("data: [DONE]\n\n" if done else "")


def usage(
    prompt: int, completion_: int, *, cached: int = 0, reasoning: int = 0, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion_,
        "total_tokens": prompt + completion_,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    out.update(extra)
    return out


def ok_interactions(name: str, model: str, prompt: str, answer: dict[str, Any]) -> list[dict[str, Any]]:
    return ok_pair(
        (request(model, stream=False, prompt=prompt), request(model, stream=True, prompt=prompt)),
        (dumps(completion(name, model, answer)), sse(chunks(name, model, answer))),
        (headers(name, 0, sse=False), headers(name, 1, sse=True)),
    )


REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def error_interactions(
    name: str, model: str, status: int, error: dict[str, Any], extra: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """§2.7: the OpenAI envelope for both stream flags (the stream never starts)."""
    out = []
    for i, stream in enumerate((False, True)):
        out.append(
            {
                "request": request(model, stream=stream, prompt="[gc] error case"),
                "response": {
                    "body": {"string": dumps({"error": error})},
                    "headers": {
                        "content-type": ["application/json"],
                        "x-request-id": [request_id(name, i)],
                        **{k: [v] for k, v in (extra or {}).items()},
                    },
                    "status": {"code": status, "message": REASONS[status]},
                },
            }
        )
    return out


LONG = [
    f"Line {i:02d} of a long answer from an OpenAI-compatible channel, streamed in pieces.\n"
    for i in range(1, 41)
]


def openai_catalogue() -> dict[str, tuple[str, str, str, list[dict[str, Any]]]]:
    """name -> (model, description, source, interactions)."""
    c: dict[str, tuple[str, str, str, list[dict[str, Any]]]] = {}

    def ok(name: str, model: str, description: str, source: str, prompt: str, answer: dict[str, Any]) -> None:
        c[name] = (model, description, source, ok_interactions(name, model, prompt, answer))

    ok(
        "text-basic",
        "gpt-5.5-2026-09-18",
        "Plain text answer, finish_reason stop; usage as in the LYRouter doc's 200 example (1250 prompt tokens, "
        "1024 of them cached, 32 completion). The model name differs from the requested id (gpt-5.5).",
        "wire-reference.md §2.3, §2.4, §2.5; lyrouter-chat-completions.md Response (200 example)",
        "Introduce LYRouter in one sentence.",
        {
            "content": ["LYRouter is", " a trusted model service", " and token governance platform."],
            "finish": "stop",
            "usage": usage(1250, 32, cached=1024),
        },
    )
    ok(
        "tool-call",
        "gpt-5.5-2026-09-18",
        "One function tool call (get_weather, city Oslo), content null, finish_reason tool_calls.",
        "wire-reference.md §2.3, §2.5 (tool-call stream)",
        "What's the weather in Oslo? Use the tool.",
        {
            "content": None,
            "tool_calls": [
                {"id": call_id("tool-call", 0), "name": "get_weather", "pieces": ['{"city":', ' "Oslo"}']}
            ],
            "finish": "tool_calls",
            "usage": usage(61, 16),
        },
    )
    ok(
        "tool-call-parallel",
        "gpt-5.5-2026-09-18",
        "Two function tool calls in one answer (get_weather Oslo, get_time Europe/Paris), content null, "
        "finish_reason tool_calls; streamed as fragments with indexes 0 and 1.",
        "wire-reference.md §2.3, §2.5 (tool-call stream)",
        "Weather in Oslo and the time in Paris, please.",
        {
            "content": None,
            "tool_calls": [
                {
                    "id": call_id("tool-call-parallel", 0),
                    "name": "get_weather",
                    "pieces": ['{"city":', ' "Oslo"}'],
                },
                {
                    "id": call_id("tool-call-parallel", 1),
                    "name": "get_time",
                    "pieces": ['{"timezone":', ' "Europe/Paris"}'],
                },
            ],
            "finish": "tool_calls",
            "usage": usage(96, 38),
        },
    )
    ok(
        "text-plus-parallel",
        "gpt-5.5-2026-09-18",
        "Text first (Let me check both.), then two function tool calls (get_weather Oslo, get_time Europe/Paris), "
        "finish_reason tool_calls; streamed, the calls' fragments have indexes 0 and 1 after the text.",
        "wire-reference.md §2.3, §2.5 (tool-call stream)",
        "Weather in Oslo and the time in Paris, please.",
        {
            "content": ["Let me", " check both."],
            "tool_calls": [
                {
                    "id": call_id("text-plus-parallel", 0),
                    "name": "get_weather",
                    "pieces": ['{"city":', ' "Oslo"}'],
                },
                {
                    "id": call_id("text-plus-parallel", 1),
                    "name": "get_time",
                    "pieces": ['{"timezone":', ' "Europe/Paris"}'],
                },
            ],
            "finish": "tool_calls",
            "usage": usage(96, 45),
        },
    )
    ok(
        "text-plus-tool",
        "gpt-5.5-2026-09-18",
        "Text first (Let me check.), then one function tool call (get_weather Oslo), finish_reason tool_calls.",
        "wire-reference.md §2.3, §2.5 (tool-call stream)",
        "What's the weather in Oslo? Use the tool.",
        {
            "content": ["Let me check."],
            "tool_calls": [
                {
                    "id": call_id("text-plus-tool", 0),
                    "name": "get_weather",
                    "pieces": ['{"city":', ' "Oslo"}'],
                }
            ],
            "finish": "tool_calls",
            "usage": usage(61, 22),
        },
    )
    ok(
        "unicode-text",
        "gpt-5.5-2026-09-18",
        "Text full of multi-byte UTF-8 (accents, CJK, emoji, a character outside the BMP), finish_reason stop: the "
        "OpenAI-compatible answer to the anthropic/unicode-text prompt.",
        "wire-reference.md §2.3, §2.5",
        "Greet me in three languages.",
        {
            "content": ["Grüße aus Zürich — ", "こんにちは、世界！", " 🎉🚀 ", "¡Olé! ∑∞≠ 𝄞"],  # noqa: RUF001 (deliberate non-ASCII)
            "finish": "stop",
            "usage": usage(21, 33),
        },
    )
    ok(
        "length",
        "gpt-5.5-2026-09-18",
        "Text cut at the output limit: finish_reason length.",
        "wire-reference.md §2.3, §2.5",
        "Tell me the history of caching.",
        {"content": ["The history of caching", " begins with"], "finish": "length", "usage": usage(25, 16)},
    )
    ok(
        "content-filter",
        "gpt-5.5-2026-09-18",
        "An answer filtered by the upstream: finish_reason content_filter.",
        "wire-reference.md §2.3 (finish_reason values)",
        "Write something the filter stops.",
        {"content": ["I can"], "finish": "content_filter", "usage": usage(18, 2)},
    )
    ok(
        "reasoning-content",
        "deepseek-chat",
        "DeepSeek-style thinking: message.reasoning_content (delta.reasoning_content when streaming) holding "
        "the token REASONING-TEXT-d5Kp, then the answer; usage with prompt_cache_hit_tokens / "
        "prompt_cache_miss_tokens beside prompt_tokens_details.cached_tokens, and reasoning_tokens.",
        "wire-reference.md §2.3-§2.5; lyrouter-chat-completions.md Response (reasoning_content, DeepSeek cache fields)",
        "Is 1009 prime?",
        {
            "reasoning_content": [
                "Check divisors of 1009 up to 31.",
                " REASONING-TEXT-d5Kp: none divides it.",
            ],
            "content": ["Yes, 1009 is", " a prime number."],
            "finish": "stop",
            "usage": usage(
                1250,
                180,
                cached=1024,
                reasoning=150,
                prompt_cache_hit_tokens=1024,
                prompt_cache_miss_tokens=226,
            ),
        },
    )
    ok(
        "reasoning-field",
        "kimi-k2-0905",
        "A provider that names the thinking `reasoning` (message.reasoning, delta.reasoning) holding the token "
        "REASONING-FIELD-w3Qb, then the answer.",
        "lyrouter-chat-completions.md Streaming (`delta.reasoning` on a few upstreams)",
        "Is 1009 prime?",
        {
            "reasoning": ["Check divisors of 1009.", " REASONING-FIELD-w3Qb: none divides it."],
            "content": ["Yes, 1009 is prime."],
            "finish": "stop",
            "usage": usage(40, 90, reasoning=70),
        },
    )
    ok(
        "long-text",
        "gpt-5.5-2026-09-18",
        "A long text answer in 40 content deltas (mid-stream faults).",
        "wire-reference.md §2.5",
        "Write forty lines.",
        {"content": LONG, "finish": "stop", "usage": usage(19, 720)},
    )

    # n: 2 and logprobs: the text-basic answer with a second choice, or with per-token log probabilities.
    for name, description, edit in (
        (
            "n-two",
            "Two choices (n: 2), indexes 0 and 1, each a plain text answer with finish_reason stop.",
            _two_choices,
        ),
        (
            "logprobs",
            "A plain text answer with logprobs.content: one {token, logprob, bytes, top_logprobs (2)} entry per "
            "content piece.",
            _with_logprobs,
        ),
    ):
        answer = {"content": ["Hello", " there."], "finish": "stop", "usage": usage(12, 3)}
        inter = ok_interactions(name, "gpt-5.5-2026-09-18", "Say hello in one sentence.", answer)
        for it in inter:
            it["response"]["body"]["string"] = edit(it["response"]["body"]["string"])
        c[name] = (
            "gpt-5.5-2026-09-18",
            description,
            "wire-reference.md §2.3, §2.5 (choices, logprobs)",
            inter,
        )

    errors: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = [
        (
            "error-400",
            400,
            {
                "message": "Invalid value for 'temperature': must be at most 2.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "invalid_value",
            },
            {},
        ),
        (
            "error-context-length",
            400,
            {
                "message": "This model's maximum context length is 400000 tokens. However, your messages "
                "resulted in 412877 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            },
            {},
        ),
        (
            "error-429",
            429,
            {
                "message": "Rate limit reached for gpt-5.5 on tokens per min (TPM): Limit 30000000, "
                "Used 30000000, Requested 1250. Please try again in 2s.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            },
            {"retry-after": "2", "x-ratelimit-remaining-tokens": "0"},
        ),
        (
            # a model the account cannot use or that does not exist: api.openai.com's 404 (openai-python raises
            # NotFoundError; the message as the API words it)
            "error-404",
            404,
            {
                "message": "The model `gc-model-that-does-not-exist` does not exist or you do not have access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            },
            {},
        ),
        (
            "error-500",
            500,
            {
                "message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error",
                "param": None,
                "code": None,
            },
            {},
        ),
    ]
    for name, status, error, extra in errors:
        c[name] = (
            "gpt-5.5-2026-09-18",
            f"HTTP {status} OpenAI error envelope for both stream flags (the stream never starts).",
            "wire-reference.md §2.7 (envelope)",
            error_interactions(name, "gpt-5.5", status, error, extra),
        )
    return c


def _events(body: str) -> list[Any]:
    return [
        json.loads(e[6:]) if e[6:] != "[DONE]" else "[DONE]"
        for e in body.split("\n\n")
        if e.startswith("data: ")
    ]


def _join(events: list[Any]) -> str:
    return sse([e for e in events if e != "[DONE]"], done="[DONE]" in events)


def _two_choices(body: str) -> str:
    """Each choice (or chunk choice) repeated as index 1: the answer to n: 2."""
    if not body.startswith("data: "):
        doc = json.loads(body)
        doc["choices"].append({**doc["choices"][0], "index": 1})
        return dumps(doc)
    events = _events(body)
    for e in events:
        if e != "[DONE]" and e["choices"]:
            e["choices"].append({**e["choices"][0], "index": 1})
    return _join(events)


def _logprob(token: str) -> dict[str, Any]:
    alt = [
        {"token": token, "logprob": -0.01, "bytes": list(token.encode())},
        {"token": "Hi", "logprob": -4.6, "bytes": [72, 105]},
    ]
    return {"token": token, "logprob": -0.01, "bytes": list(token.encode()), "top_logprobs": alt}


def _with_logprobs(body: str) -> str:
    if not body.startswith("data: "):
        doc = json.loads(body)
        doc["choices"][0]["logprobs"] = {"content": [_logprob("Hello"), _logprob(" there.")], "refusal": None}
        return dumps(doc)
    events = _events(body)
    for e in events:
        if e != "[DONE]" and e["choices"] and e["choices"][0]["delta"].get("content"):
            text = e["choices"][0]["delta"]["content"]
            e["choices"][0]["logprobs"] = {"content": [_logprob(text)], "refusal": None}
    return _join(events)


def cassettes() -> list[Synthesized]:
    return [
        Synthesized(
            f"openai/{name}",
            {
                "origin": "synthesized",
                "date": DATE,
                "provider": "openai",
                "model": model,
                "description": description,
                "source": source,
            },
            interactions,
        )
        for name, (model, description, source, interactions) in openai_catalogue().items()
    ]
