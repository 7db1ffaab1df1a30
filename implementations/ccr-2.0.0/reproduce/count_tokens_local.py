#!/usr/bin/env python3
"""Claim: CCR 2.0.0's POST /v1/messages/count_tokens never asks the provider: it counts locally with tiktoken
cl100k_base (an OpenAI encoding) over text, tool_use input, tool_result text and tool name+description+schema,
ignoring images, so the number is not the provider's count - even when the provider is Anthropic (pass-through
set-up), whose /v1/messages/count_tokens would answer. Claude Code uses this count to size its context.
Source: packages/server/src/server.ts (app.post("/v1/messages/count_tokens") -> calculateTokenCount),
packages/core/src/utils/router.ts calculateTokenCount (get_encoding("cl100k_base")).
Run: python3 count_tokens_local.py   (starts a stub Anthropic provider and CCR; see README.md)"""
import json
import sys

import anthropic

from ccrstub import CCR, GATEWAY_KEY, Stub

PROVIDER_COUNT = 1432  # what the stub provider says the request costs


def answer(path, body):
    if path.startswith("/v1/messages/count_tokens"):
        return 200, {"content-type": "application/json"}, json.dumps({"input_tokens": PROVIDER_COUNT}).encode()
    return 404, {"content-type": "application/json"}, b'{"type":"error","error":{"type":"not_found_error"}}'


stub = Stub(answer)
ccr = CCR("anthropic", stub.url)
try:
    client = anthropic.Anthropic(base_url=ccr.url, api_key=GATEWAY_KEY, max_retries=0)
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
    result = client.messages.count_tokens(
        model="claude-sonnet-4-5-20250929", system="You are terse.",
        messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
            {"type": "text", "text": "Count my tokens."}]}])
    print(f"anthropic SDK count_tokens -> input_tokens={result.input_tokens}")
    print(f"provider calls: {[p for p, _, _ in stub.requests]} (expected one /v1/messages/count_tokens)")
    print(f"provider's count: {PROVIDER_COUNT}")
    present = not stub.requests or result.input_tokens != PROVIDER_COUNT
finally:
    ccr.stop()
    stub.close()
print("PRESENT: counted locally, the provider is never asked" if present else "fixed")
sys.exit(1 if present else 0)
