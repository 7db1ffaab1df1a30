#!/usr/bin/env python3
"""Claim: streaming through CCR 2.0.0 to an OpenAI-compatible provider, the usage in message_start and message_delta
is 0 input / 0 output tokens. CCR does not ask for it (no stream_options.include_usage; only the undocumented
`streamoptions` transformer adds it), and even when asked it drops the usage chunk whenever it arrives in the same
read as the finish_reason chunk (the parser `break`s out of the rest of that read). Claude Code's context and cost
accounting then sees 0 tokens. message_start's input_tokens is 0 for every bridged family (Gemini too, whose
usageMetadata CCR does read for message_delta).
Source: packages/core/src/transformer/anthropic.transformer.ts transformRequestOut (no stream_options) and
convertOpenAIStreamToAnthropic (`if (choice?.finish_reason ...) { ...; break; }` inside `for (const line of lines)`).
Run: python3 stream_usage_zero.py   (starts a stub OpenAI provider and CCR twice; see README.md)"""
import sys

import ccrstub
from ccrstub import CCR, Stub, chunk, events, sse

USAGE = {"prompt_tokens": 1250, "completion_tokens": 32, "total_tokens": 1282}


def answer(path, body):
    # as api.openai.com: the usage chunk only when stream_options.include_usage, then [DONE]; the finish chunk,
    # the usage chunk and [DONE] leave in one write (one TCP segment), as they often do
    events_ = [chunk({"role": "assistant", "content": ""}), chunk({"content": "Hello."})]
    tail = [chunk({}, "stop")]
    if (body.get("stream_options") or {}).get("include_usage"):
        tail.append(chunk(None, usage=USAGE))
    return 200, {"content-type": "text/event-stream"}, sse(events_) + [b"".join(sse(tail + ["[DONE]"]))]


present = []
for transformers in (None, ["streamoptions"]):
    stub = Stub(answer)
    entry, default = ccrstub.provider("openai", stub.url)
    if transformers:
        entry["transformer"] = {"use": transformers}
    original = ccrstub.provider
    ccrstub.provider = lambda family, url: (entry, default)
    ccr = CCR("openai", stub.url)
    ccrstub.provider = original
    try:
        _, _, text = ccr.post("/v1/messages", {"model": "claude-sonnet-4-5-20250929", "max_tokens": 64,
                                               "stream": True, "messages": [{"role": "user", "content": "Hi"}]})
        seen = events(text)
        asked = stub.requests[-1][2].get("stream_options")
        start = [e["message"]["usage"] for e in seen if e["type"] == "message_start"]
        delta = [e["usage"] for e in seen if e["type"] == "message_delta"]
        label = "provider transformer streamoptions" if transformers else "no provider transformer (README's form)"
        print(f"[{label}] upstream stream_options={asked!r}")
        print(f"  message_start usage {start}; message_delta usage {delta}")
        print(f"  provider's count: {USAGE['prompt_tokens']} in / {USAGE['completion_tokens']} out")
        if not delta or delta[-1].get("output_tokens") != USAGE["completion_tokens"]:
            present.append(f"{label}: usage 0")
    finally:
        ccr.stop()
        stub.close()
GEMINI = sse([{"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello."}]}, "finishReason": "STOP",
                "index": 0}], "modelVersion": "gemini-2.5-flash",
               "usageMetadata": {"promptTokenCount": 1250, "candidatesTokenCount": 32, "totalTokenCount": 1282}}])
stub = Stub(lambda path, body: (200, {"content-type": "text/event-stream"}, GEMINI))
ccr = CCR("gemini", stub.url)
try:
    _, _, text = ccr.post("/v1/messages", {"model": "claude-sonnet-4-5-20250929", "max_tokens": 64, "stream": True,
                                           "messages": [{"role": "user", "content": "Hi"}]})
    seen = events(text)
    start = [e["message"]["usage"] for e in seen if e["type"] == "message_start"]
    delta = [e["usage"] for e in seen if e["type"] == "message_delta"]
    print(f"[gemini] message_start usage {start}; message_delta usage {delta} (provider: 1250 in / 32 out)")
    if not start or not start[0].get("input_tokens"):
        present.append("gemini: message_start input_tokens 0")
finally:
    ccr.stop()
    stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
