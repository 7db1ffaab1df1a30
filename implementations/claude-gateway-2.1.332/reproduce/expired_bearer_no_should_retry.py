#!/usr/bin/env python3
"""Claim: the gateway answers an expired session bearer 401 authentication_error without `x-should-retry: false`,
which its own GET /protocol (Errors table, 401 row) tells gateways to send "for a revoked or expired bearer so
the prompt is immediate; without the header the client retries with backoff for about three minutes first".

Set-up: a copy of peers/claude-gateway with session.ttl_hours 0.001 (3.6 s); sign in, wait 8 s, send.
Exit 1 while the expired bearer's 401 lacks x-should-retry: false.
Run: python3 expired_bearer_no_should_retry.py   (starts and stops the gateway itself)
"""
import json
import sys
import time

from common import Stub, call, ok_answer, start_gateway, stop_gateway

stub = Stub(ok_answer)
token = start_gateway(stub.url, ttl_hours=0.001)
try:
    body = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32, "messages": [{"role": "user", "content": "hi"}]}
    hdr = {"authorization": f"Bearer {token}", "anthropic-version": "2023-06-01"}
    fresh, _, _ = call("POST", "/v1/messages", hdr, body)
    time.sleep(8)
    got, headers, data = call("POST", "/v1/messages", hdr, body)
    retry = {k.lower(): v for k, v in headers.items()}.get("x-should-retry")
    print(f"fresh token -> {fresh}; the same token 8 s after it expired -> {got} {json.dumps(data)}")
    print(f"expected 401 with x-should-retry: false; got x-should-retry: {retry!r}")
    present = not (got == 401 and retry == "false")
finally:
    stop_gateway()
    stub.close()
print("behaviour present" if present else "fixed")
sys.exit(1 if present else 0)
