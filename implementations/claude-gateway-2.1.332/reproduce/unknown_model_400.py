#!/usr/bin/env python3
"""Claim: a model id the gateway does not serve is answered 400 invalid_request_error ("model … is not in the
operator's model allowlist"), not Anthropic's 404 not_found_error; the provider is never asked.

Expected (Anthropic API errors: 404 not_found_error for a model that does not exist; SDK raises NotFoundError).
Note: the gateway's GET /protocol asks for exactly this 400 for a *denied* model ("Enforce your model allowlist
here, returning 400 invalid_request_error for a denied model"): the behaviour is deliberate.
Exit 1 while an unknown model is not 404 not_found_error.
Run: python3 unknown_model_400.py   (starts the gateway with peers/claude-gateway/run_peer.sh, stops it)
"""
import json
import sys

import anthropic

from common import Stub, call, ok_answer, start_gateway, stop_gateway

stub = Stub(ok_answer)
token = start_gateway(stub.url)
try:
    body = {"model": "gc-model-that-does-not-exist", "max_tokens": 32, "messages": [{"role": "user", "content": "hi"}]}
    got, _, data = call("POST", "/v1/messages", {"authorization": f"Bearer {token}", "anthropic-version": "2023-06-01"}, body)
    print(f"unknown model: expected 404 not_found_error; got {got} {json.dumps(data)}; provider asked {len(stub.calls)} times")
    present = not (got == 404 and data.get("error", {}).get("type") == "not_found_error")
    client = anthropic.Anthropic(base_url="http://127.0.0.1:3480", auth_token=token, max_retries=0)
    try:
        client.messages.create(**body)
    except anthropic.APIStatusError as err:
        print(f"anthropic SDK: expected NotFoundError, got {type(err).__name__}")
finally:
    stop_gateway()
    stub.close()
print("behaviour present" if present else "fixed")
sys.exit(1 if present else 0)
