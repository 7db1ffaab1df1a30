#!/usr/bin/env python3
"""Claim: bridging /v1/messages to Gemini, CCR 2.0.0 drops or misplaces request fields: the system prompt goes as
an ordinary user turn (no systemInstruction), max_tokens, temperature and stop_sequences never reach
generationConfig (maxOutputTokens/temperature/stopSequences absent: the model may run to its own limit), and
tool_choice {"type": "any"} (forced tool use) is dropped (functionCallingConfig {} - only OpenAI's "required" is
mapped). tool_choice auto/none go as lower-case "auto"/"none" where the Gemini reference spells AUTO/NONE (printed,
not counted: whether the live API accepts lower case is not established here).
Source: packages/core/src/utils/gemini.util.ts buildRequestBody (role "system" -> "user"; generationConfig holds
only thinkingConfig; tool_choice "auto"/"none"/"required"/function only).
Run: python3 gemini_request_mapping.py   (starts a stub Gemini provider and CCR; see README.md)"""
import json
import sys

from ccrstub import CCR, Stub

ANSWER = json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi."}]}, "finishReason": "STOP",
                                     "index": 0}], "modelVersion": "gemini-2.5-flash",
                     "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11}})
stub = Stub(lambda path, body: (200, {"content-type": "application/json"}, ANSWER.encode()))
ccr = CCR("gemini", stub.url)
present = []
TOOLS = [{"name": "get_weather", "description": "Weather.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
try:
    ccr.post("/v1/messages", {"model": "claude-sonnet-4-5-20250929", "max_tokens": 77, "temperature": 0.2,
                              "stop_sequences": ["END"], "system": "You are terse.",
                              "messages": [{"role": "user", "content": "Say hello."}]})
    path, _, sent = stub.requests[-1]
    print(f"POST {path}")
    print(f"  systemInstruction: {sent.get('systemInstruction')!r} (expected the system text)")
    print(f"  contents: {json.dumps(sent['contents'])}")
    print(f"  generationConfig: {sent.get('generationConfig')!r} (expected maxOutputTokens 77, temperature 0.2, "
          "stopSequences ['END'])")
    if not sent.get("systemInstruction"):
        present.append("system sent as a user turn")
    config = sent.get("generationConfig") or {}
    for key in ("maxOutputTokens", "temperature", "stopSequences"):
        if key not in config:
            present.append(f"{key} not sent")
    for choice in ("any", "auto", "none"):
        ccr.post("/v1/messages", {"model": "x", "max_tokens": 64, "tools": TOOLS, "tool_choice": {"type": choice},
                                  "messages": [{"role": "user", "content": "Weather in Oslo?"}]})
        got = stub.requests[-1][2].get("toolConfig")
        print(f"  tool_choice {choice} -> toolConfig {got!r} (reference: mode {choice.upper()})")
        if choice == "any" and (got or {}).get("functionCallingConfig", {}).get("mode") not in ("ANY", "any"):
            present.append("tool_choice any dropped")
finally:
    ccr.stop()
    stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
