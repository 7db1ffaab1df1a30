#!/usr/bin/env python3
"""Claim: the gateway accepts its bearer token only as `Authorization: Bearer`; the same token as `x-api-key`
(how the Anthropic API takes a key, and how Claude Code sends ANTHROPIC_API_KEY) is refused 401 "invalid token".

Expected (Anthropic API authentication: the key travels as x-api-key): 200.
Exit 1 while x-api-key is refused.
Run: python3 x_api_key_refused.py   (starts the gateway with peers/claude-gateway/run_peer.sh, stops it)
"""
import json
import sys

from common import Stub, call, ok_answer, start_gateway, stop_gateway

stub = Stub(ok_answer)
token = start_gateway(stub.url)
try:
    body = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32, "messages": [{"role": "user", "content": "hi"}]}
    bearer, _, _ = call("POST", "/v1/messages", {"authorization": f"Bearer {token}", "anthropic-version": "2023-06-01"}, body)
    got, _, data = call("POST", "/v1/messages", {"x-api-key": token, "anthropic-version": "2023-06-01"}, body)
    print(f"same token as Authorization: Bearer -> {bearer}")
    print(f"same token as x-api-key: expected 200; got {got} {json.dumps(data)}")
    present = got != 200
finally:
    stop_gateway()
    stub.close()
print("behaviour present" if present else "fixed")
sys.exit(1 if present else 0)
