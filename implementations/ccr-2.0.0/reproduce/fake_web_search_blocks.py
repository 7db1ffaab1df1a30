#!/usr/bin/env python3
"""Claim: bridging to an OpenAI-compatible provider, CCR 2.0.0 puts a fabricated server_tool_use (web_search, query
"") and an empty web_search_tool_result block before the text of EVERY non-streaming answer whose message carries
"annotations": [] - which api.openai.com's chat completions return on every message. `if (choice.message.annotations)`
is true for an empty list. A client reading content[0].text breaks; Claude Code shows a web search that never ran.
Source: packages/core/src/transformer/anthropic.transformer.ts convertOpenAIResponseToAnthropic
(`if (choice.message.annotations) { ... content.push({type: "server_tool_use", ...}) ...}`).
Run: python3 fake_web_search_blocks.py   (starts a stub OpenAI provider and CCR; see README.md)"""
import sys

import anthropic

from ccrstub import CCR, GATEWAY_KEY, Stub, chat_completion

stub = Stub(lambda path, body: (200, {"content-type": "application/json"}, chat_completion("Hello there.")))
ccr = CCR("openai", stub.url)
try:
    client = anthropic.Anthropic(base_url=ccr.url, api_key=GATEWAY_KEY, max_retries=0)
    msg = client.messages.create(model="claude-sonnet-4-5-20250929", max_tokens=64,
                                 messages=[{"role": "user", "content": "Say hello."}])
    print("provider answered: message {content: 'Hello there.', annotations: []} (no web search)")
    print(f"CCR content block types: {[b.type for b in msg.content]} (expected ['text'])")
    try:
        print(f"msg.content[0].text = {msg.content[0].text!r}")
    except AttributeError as e:
        print(f"msg.content[0].text -> AttributeError: {e}")
    present = [b.type for b in msg.content] != ["text"]
finally:
    ccr.stop()
    stub.close()
print("PRESENT: fabricated web search blocks" if present else "fixed")
sys.exit(1 if present else 0)
