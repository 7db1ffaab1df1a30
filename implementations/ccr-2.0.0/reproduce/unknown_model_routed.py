#!/usr/bin/env python3
"""Claim: CCR 2.0.0 answers any model id it does not know with its Router.default model: the client asks for
"gc-model-that-does-not-exist", the provider receives the default model and the client gets 200 (Anthropic: 404
not_found_error). Only a "provider,model" id chooses a model; every other id is routed by scenario (default,
background for "claude...haiku", think for thinking, longContext, webSearch). The response's `model` names the
provider's model, not the one asked for.
Source: packages/core/src/utils/router.ts getUseModel (`return { model: Router?.default, ... }`).
Run: python3 unknown_model_routed.py   (starts a stub Anthropic provider and CCR; see README.md)"""
import json
import sys

from ccrstub import CCR, Stub

ANSWER = {"id": "msg_stub", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
          "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn", "stop_sequence": None,
          "usage": {"input_tokens": 9, "output_tokens": 2}}
stub = Stub(lambda path, body: (200, {"content-type": "application/json"}, json.dumps(ANSWER).encode()))
ccr = CCR("anthropic", stub.url)
try:
    status, _, text = ccr.post("/v1/messages", {"model": "gc-model-that-does-not-exist", "max_tokens": 16,
                                                "messages": [{"role": "user", "content": "Say hello."}]})
    sent = stub.requests[-1][2]["model"] if stub.requests else None
    print("client asked for model 'gc-model-that-does-not-exist'")
    print(f"provider received model {sent!r}; client got {status} model={json.loads(text).get('model')!r} "
          "(expected 404 not_found_error, or the id passed on for the provider to refuse)")
    present = status == 200 and sent != "gc-model-that-does-not-exist"
finally:
    ccr.stop()
    stub.close()
print("PRESENT: unknown model served by Router.default" if present else "fixed")
sys.exit(1 if present else 0)
