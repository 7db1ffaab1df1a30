#!/usr/bin/env python3
"""Claim: CCR 2.0.0 reports the wrong stop_reason when bridging. OpenAI-compatible provider: finish_reason
content_filter becomes "stop_sequence" (with stop_sequence null; Anthropic says "refusal"). Gemini provider:
finishReason MAX_TOKENS becomes "end_turn" (a cut answer looks complete), a functionCall answer (finishReason STOP)
becomes "end_turn" instead of "tool_use" (agent loops that wait for tool_use stop), SAFETY becomes "end_turn".
Source: packages/core/src/transformer/anthropic.transformer.ts convertOpenAIResponseToAnthropic / stopReasonMapping
(stop, length, tool_calls, content_filter -> stop_sequence, anything else -> end_turn);
packages/core/src/utils/gemini.util.ts transformResponseOut (finish_reason = finishReason.toLowerCase():
"max_tokens", "stop", "safety" - none of them OpenAI's words, so they fall to end_turn).
Run: python3 stop_reasons.py   (starts stub providers and CCR twice; see README.md)"""
import json
import sys

from ccrstub import CCR, Stub, chat_completion


def gemini(parts, finish):
    return json.dumps({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish,
                                       "index": 0}], "modelVersion": "gemini-2.5-flash", "responseId": "r1",
                       "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5,
                                         "totalTokenCount": 14}}).encode()


CASES = {
    "openai": [("content_filter", chat_completion("", "content_filter"), "refusal")],
    "gemini": [("MAX_TOKENS", gemini([{"text": "Line 1 of"}], "MAX_TOKENS"), "max_tokens"),
               ("functionCall + STOP", gemini([{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}],
                                              "STOP"), "tool_use"),
               ("SAFETY", gemini([], "SAFETY"), "refusal")],
}
TOOLS = [{"name": "get_weather", "description": "Weather.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
present = []
for family, cases in CASES.items():
    current = {}
    stub = Stub(lambda path, body: (200, {"content-type": "application/json"}, current["payload"]))
    ccr = CCR(family, stub.url)
    try:
        for label, payload, expected in cases:
            current["payload"] = payload
            status, _, text = ccr.post("/v1/messages", {
                "model": "claude-sonnet-4-5-20250929", "max_tokens": 64, "tools": TOOLS,
                "messages": [{"role": "user", "content": "Weather in Oslo?"}]})
            got = json.loads(text).get("stop_reason") if status == 200 else f"HTTP {status}"
            print(f"[{family}] provider {label} -> stop_reason {got!r} (expected {expected!r})")
            if got != expected:
                present.append(f"{family} {label} -> {got}")
    finally:
        ccr.stop()
        stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
