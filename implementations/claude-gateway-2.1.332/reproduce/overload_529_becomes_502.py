#!/usr/bin/env python3
"""Claim: the Claude apps gateway answers a provider's 529 overloaded_error (and any 500/503) with its own
502 api_error "all upstreams failed (1 attempted)", dropping the provider's retry-after and x-should-retry.

Expected (Anthropic API errors; the gateway's own GET /protocol Errors table: "529 overloaded_error — Upstream
at capacity; client backs off and retries"): 529 overloaded_error reaches the client.
The stub provider answers every request 529 overloaded_error with retry-after: 3 (and, for comparison, 503).
Exit 1 while the 529 arrives as anything but 529 overloaded_error.
Run: python3 overload_529_becomes_502.py   (starts the gateway with peers/claude-gateway/run_peer.sh, stops it)
"""
import json
import sys

import anthropic

from common import Stub, call, start_gateway, stop_gateway

STATUS = {"v": 529}


def answer(path, headers, body):
    status = STATUS["v"]
    kind = "overloaded_error" if status == 529 else "api_error"
    return status, {"content-type": "application/json", "retry-after": "3", "x-should-retry": "true",
                    "request-id": "req_stub_overloaded"}, \
        json.dumps({"type": "error", "error": {"type": kind, "message": "Overloaded" if status == 529 else "Service unavailable"},
                    "request_id": "req_stub_overloaded"}).encode()


stub = Stub(answer)
token = start_gateway(stub.url)
present = True
try:
    body = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32, "messages": [{"role": "user", "content": "hi"}]}
    hdr = {"authorization": f"Bearer {token}", "anthropic-version": "2023-06-01"}
    for status in (529, 503):
        STATUS["v"] = status
        n = len(stub.calls)
        got, headers, data = call("POST", "/v1/messages", hdr, body)
        kept = {k: v for k, v in headers.items() if k.lower() in ("retry-after", "x-should-retry")}
        print(f"provider {status}: expected {status} with the provider's body and retry-after; "
              f"got {got} {json.dumps(data)} headers kept: {kept or 'none'} (upstream calls: {len(stub.calls) - n})")
        if status == 529:
            present = not (got == 529 and isinstance(data, dict) and data.get("error", {}).get("type") == "overloaded_error")
    STATUS["v"] = 529
    client = anthropic.Anthropic(base_url="http://127.0.0.1:3480", auth_token=token, max_retries=0)
    try:
        client.messages.create(**body)
    except anthropic.APIStatusError as err:
        print(f"anthropic SDK: expected OverloadedError, got {type(err).__name__} (status {err.status_code})")
finally:
    stop_gateway()
    stub.close()
print("behaviour present" if present else "fixed")
sys.exit(1 if present else 0)
