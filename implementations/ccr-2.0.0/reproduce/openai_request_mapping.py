#!/usr/bin/env python3
"""Claim: bridging /v1/messages to an OpenAI-compatible chat provider, CCR 2.0.0 sends requests the provider
refuses or misreads: tool_choice {"type": "any"} goes as "any" (OpenAI takes "none" | "auto" | "required" | an
object: api.openai.com refuses it); a `thinking` request adds a top-level "reasoning" object that
api.openai.com refuses ("Unrecognized request argument supplied: reasoning", musistudio/claude-code-router#724);
stop_sequences (and top_p, top_k, metadata) are dropped; a tool_result whose content is a list of blocks reaches
the model as the JSON text of Anthropic's blocks (an image as base64 text), and its is_error is dropped.
Source: packages/core/src/transformer/anthropic.transformer.ts transformRequestOut (result = {messages, model,
max_tokens, temperature, stream, tools, tool_choice}; tool_choice = request.tool_choice.type; reasoning =
{effort, enabled}; tool message content = JSON.stringify(tool.content)).
Run: python3 openai_request_mapping.py   (starts a stub OpenAI provider and CCR; see README.md)"""
import json
import sys

from ccrstub import CCR, Stub, chat_completion

stub = Stub(lambda path, body: (200, {"content-type": "application/json"}, chat_completion()))
ccr = CCR("openai", stub.url)
present = []
TOOLS = [{"name": "get_weather", "description": "Weather.",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
try:
    base = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 2048,
            "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    ccr.post("/v1/messages", {**base, "tools": TOOLS, "tool_choice": {"type": "any"}})
    sent = stub.requests[-1][2]
    print(f"tool_choice {{type: any}} -> upstream tool_choice {sent.get('tool_choice')!r} (expected 'required')")
    if sent.get("tool_choice") != "required":
        present.append("tool_choice any sent as 'any'")

    ccr.post("/v1/messages", {**base, "stop_sequences": ["END"], "top_p": 0.5})
    sent = stub.requests[-1][2]
    print(f"stop_sequences ['END'] -> upstream stop {sent.get('stop')!r}, top_p {sent.get('top_p')!r} "
          "(expected ['END'], 0.5)")
    if sent.get("stop") not in (["END"], "END"):
        present.append("stop_sequences dropped")

    ccr.post("/v1/messages", {**base, "thinking": {"type": "enabled", "budget_tokens": 1024}})
    sent = stub.requests[-1][2]
    print(f"thinking -> upstream top-level keys {sorted(sent)} (reasoning={sent.get('reasoning')!r})")
    if "reasoning" in sent:
        present.append("unknown parameter 'reasoning' sent to Chat Completions")

    history = [{"role": "user", "content": "Weather in Paris?"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                  "input": {"city": "Paris"}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
                                             "content": [{"type": "text", "text": "18 degrees, clear"}]}]}]
    ccr.post("/v1/messages", {**base, "tools": TOOLS, "messages": history})
    tool = [m for m in stub.requests[-1][2]["messages"] if m["role"] == "tool"][0]
    print(f"tool_result [text block '18 degrees, clear'] -> upstream tool content {json.dumps(tool['content'])}")
    if isinstance(tool["content"], str) and '"type"' in tool["content"]:
        present.append("tool_result blocks sent as JSON text")
finally:
    ccr.stop()
    stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
