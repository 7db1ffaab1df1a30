#!/usr/bin/env python3
"""Claim: every error CCR 2.0.0 returns on /v1/messages (its own and the provider's) is
{"error": {"message": <text + a Node stack trace>, "type": "api_error", "code": ...}}: no top-level "type": "error",
the type is api_error whatever the status (Anthropic: 400 invalid_request_error, 429 rate_limit_error, 404
not_found_error, 529 overloaded_error), the provider's own envelope is buried as text in the message, and the
provider's Retry-After is dropped. Even with the Anthropic transformer alone (pass-through), whose README promises
to "preserve the original request and response parameters".
Source: packages/core/src/api/middleware.ts errorHandler (message: error.message + error.stack, type default
"api_error"); packages/core/src/api/routes.ts sendRequestToProvider (createApiError(`Error from provider(...)`,
response.status, "provider_response_error"), no headers kept).
Run: python3 error_envelope.py   (starts a stub Anthropic provider and CCR; see README.md)"""
import json
import sys

import anthropic

from ccrstub import CCR, GATEWAY_KEY, Stub

ANTHROPIC_429 = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has "
                 "exceeded your per-minute rate limit"}, "request_id": "req_stub"}


def answer(path, body):
    return 429, {"content-type": "application/json", "retry-after": "7"}, json.dumps(ANTHROPIC_429).encode()


stub = Stub(answer)
ccr = CCR("anthropic", stub.url)
present = []
try:
    req = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 64,
           "messages": [{"role": "user", "content": "hello"}]}
    status, headers, text = ccr.post("/v1/messages", req)
    body = json.loads(text)
    print(f"provider answered 429 {json.dumps(ANTHROPIC_429)} with retry-after: 7")
    print(f"CCR answered {status}, retry-after: {headers.get('retry-after') or headers.get('Retry-After')}")
    print(f"  top-level type: {body.get('type')!r} (expected 'error')")
    print(f"  error.type: {body['error'].get('type')!r} (expected 'rate_limit_error')")
    print(f"  error.message starts: {body['error']['message'][:110]!r}")
    print(f"  stack trace in message: {'    at ' in body['error']['message']}")
    if body.get("type") != "error" or body["error"].get("type") != "rate_limit_error":
        present.append("provider 429 re-wrapped as api_error")
    if "    at " in body["error"]["message"]:
        present.append("stack trace (server file paths) in the error message")
    if not (headers.get("retry-after") or headers.get("Retry-After")):
        present.append("Retry-After dropped")

    status, _, text = ccr.post("/v1/messages", b'{"model": "x", "messages": [ ')
    print(f"malformed JSON: {status} error.type={json.loads(text)['error'].get('type')!r} "
          "(expected 400 invalid_request_error)")
    if json.loads(text)["error"].get("type") != "invalid_request_error":
        present.append("malformed request is api_error")

    # what the official SDK sees (max_retries=0: one request)
    client = anthropic.Anthropic(base_url=ccr.url, api_key=GATEWAY_KEY, max_retries=0)
    try:
        client.messages.create(**req)
    except anthropic.APIStatusError as e:
        print(f"anthropic SDK: {type(e).__name__} (class chosen by status), "
              f"e.body['error']['type'] = {e.body['error']['type']!r}, e.type = {getattr(e, 'type', None)!r}")
finally:
    ccr.stop()
    stub.close()
print("PRESENT: " + "; ".join(present) if present else "fixed")
sys.exit(1 if present else 0)
