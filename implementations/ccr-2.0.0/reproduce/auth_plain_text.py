#!/usr/bin/env python3
"""Claim: with APIKEY set, CCR 2.0.0 answers a missing or wrong key 401 with a plain-text body ("APIKEY is missing",
"Invalid API key"), not Anthropic's {"type": "error", "error": {"type": "authentication_error", ...}} - which CCR's
own docs promise (docs/docs/server/api/messages-api.md, "401 Unauthorized": {"error": {"type":
"authentication_error", "message": "Invalid API key"}}). The provider is not called (correct).
Source: packages/server/src/middleware/auth.ts (reply.status(401).send("Invalid API key")).
Run: python3 auth_plain_text.py   (starts a stub provider and CCR; see README.md)"""
import json
import sys

import anthropic

from ccrstub import CCR, Stub, chat_completion

stub = Stub(lambda path, body: (200, {"content-type": "application/json"}, chat_completion()))
ccr = CCR("openai", stub.url)
present = []
try:
    req = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    for label, headers in (("wrong key", {"x-api-key": "gc-wrong-key-0000"}), ("no key", {"x-api-key": None})):
        status, h, text = ccr.post("/v1/messages", req, headers)
        print(f"{label}: {status} content-type={h.get('content-type') or h.get('Content-Type')!r} body={text!r}")
        try:
            ok = json.loads(text).get("error", {}).get("type") == "authentication_error"
        except ValueError:
            ok = False
        if status != 401 or not ok:
            present.append(f"{label}: not an authentication_error envelope")
    print(f"provider calls: {len(stub.requests)} (expected 0)")
    client = anthropic.Anthropic(base_url=ccr.url, api_key="gc-wrong-key-0000", max_retries=0)
    try:
        client.messages.create(**req)
    except anthropic.APIStatusError as e:
        print(f"anthropic SDK: {type(e).__name__}, e.body = {e.body!r}, e.type = {getattr(e, 'type', None)!r}")
finally:
    ccr.stop()
    stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
