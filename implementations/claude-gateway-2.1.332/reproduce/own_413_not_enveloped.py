#!/usr/bin/env python3
"""Claim: a request over the gateway's body cap (limits.max_request_bytes, default 33 554 432 bytes) is answered
413 with a text/plain body "payload too large", not Anthropic's envelope {"type":"error","error":{"type":
"request_too_large",…}} that its own GET /protocol (Errors: "Bearer-authenticated endpoints use the Anthropic
envelope"; row 413 request_too_large) and the Anthropic API use. (A chunked body without Content-Length gets
411 text/plain "length required", which the protocol allows.)

Exit 1 while the 413 is not the Anthropic envelope.
Run: python3 own_413_not_enveloped.py   (starts the gateway with peers/claude-gateway/run_peer.sh, stops it)
"""
import http.client
import json
import sys

import anthropic

from common import Stub, ok_answer, start_gateway, stop_gateway

stub = Stub(ok_answer)
token = start_gateway(stub.url)
try:
    big = "x" * (33 * 1024 * 1024)  # 33 MiB of text: over the default 32 MiB cap
    body = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32, "messages": [{"role": "user", "content": big}]}
    raw = json.dumps(body).encode()
    # the gateway answers from the Content-Length header and closes: send the headers, then read its answer
    conn = http.client.HTTPConnection("127.0.0.1", 3480, timeout=30)
    conn.putrequest("POST", "/v1/messages")
    for k, v in {"authorization": f"Bearer {token}", "anthropic-version": "2023-06-01",
                 "content-type": "application/json", "content-length": str(len(raw))}.items():
        conn.putheader(k, v)
    conn.endheaders()
    resp = conn.getresponse()
    got, ctype, text = resp.status, resp.getheader("content-type"), resp.read().decode()
    print(f"{len(raw)}-byte request: expected 413 application/json request_too_large; got {got} {ctype} {text[:120]!r}")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    present = not (got == 413 and isinstance(data, dict) and data.get("error", {}).get("type") == "request_too_large")
    try:
        anthropic.Anthropic(base_url="http://127.0.0.1:3480", auth_token=token, max_retries=0).messages.create(**body)
    except anthropic.APIStatusError as err:
        print(f"anthropic SDK: {type(err).__name__} status {err.status_code}, err.type={getattr(err, 'type', None)!r}, message {err.message!r}")
    except anthropic.APIConnectionError as err:
        print(f"anthropic SDK: {type(err).__name__} ({err.__cause__!r}): the gateway closed while the body was still being sent")
finally:
    stop_gateway()
    stub.close()
print("behaviour present" if present else "fixed")
sys.exit(1 if present else 0)
