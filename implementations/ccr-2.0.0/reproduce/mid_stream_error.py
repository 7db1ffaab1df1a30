#!/usr/bin/env python3
"""Claim: when the provider's stream fails after some text, CCR 2.0.0 does not end the Anthropic stream with an
`error` event. OpenAI-compatible provider: it writes {"type": "error", "message": {...}} (no `error` object) and then
carries on with content_block_stop, message_delta stop_reason "end_turn" and message_stop. Gemini provider: the
error chunk is dropped without a word and the stream ends "end_turn": a cut answer is delivered as complete.
Source: packages/core/src/transformer/anthropic.transformer.ts convertOpenAIStreamToAnthropic (`if (chunk.error)`
enqueues {type: "error", message: ...} and `continue`s; safeClose() always writes message_delta end_turn);
packages/core/src/utils/gemini.util.ts transformResponseOut (a chunk without candidates: "Invalid chunk structure",
return).
Run: python3 mid_stream_error.py   (starts stub providers and CCR twice; see README.md)"""
import sys

import anthropic

from ccrstub import CCR, GATEWAY_KEY, Stub, chunk, events, sse

OPENAI = sse([chunk({"role": "assistant", "content": ""}), chunk({"content": "Line 1 of 40.\n"}),
              {"error": {"message": "Overloaded", "type": "overloaded_error", "param": None, "code": None}}])
GEMINI = sse([{"candidates": [{"content": {"role": "model", "parts": [{"text": "Line 1 of 40.\n"}]}, "index": 0}],
               "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14},
               "modelVersion": "gemini-2.5-flash"},
              {"error": {"code": 503, "message": "Overloaded", "status": "UNAVAILABLE"}}])
present = []
for family, payload in (("openai", OPENAI), ("gemini", GEMINI)):
    stub = Stub(lambda path, body, p=payload: (200, {"content-type": "text/event-stream"}, p))
    ccr = CCR(family, stub.url)
    try:
        req = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 512, "stream": True,
               "messages": [{"role": "user", "content": "Write forty lines."}]}
        status, _, text = ccr.post("/v1/messages", req)
        seen = events(text)
        errors = [e for e in seen if e.get("type") == "error"]
        after = [e["type"] for e in seen[seen.index(errors[0]) + 1:]] if errors else []
        stop = [e["delta"].get("stop_reason") for e in seen if e.get("type") == "message_delta"]
        print(f"[{family}] provider stream: text, then an error chunk")
        print(f"  CCR error events: {errors}")
        print(f"  events after the error: {after}; message_delta stop_reason: {stop}")
        if not errors or "error" not in errors[0] or after or "end_turn" in stop:
            present.append(f"{family}: failed stream not ended by an Anthropic error event")
        client = anthropic.Anthropic(base_url=ccr.url, api_key=GATEWAY_KEY, max_retries=0)
        try:
            with client.messages.stream(**{k: v for k, v in req.items() if k != "stream"}) as s:
                final = s.get_final_message()
            print(f"  anthropic SDK: no exception; stop_reason={final.stop_reason!r}, "
                  f"text={final.content[0].text!r}")
        except anthropic.APIStatusError as e:
            print(f"  anthropic SDK: {type(e).__name__}: body={e.body!r}")
    finally:
        ccr.stop()
        stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
