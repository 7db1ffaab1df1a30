#!/usr/bin/env python3
"""Claim: with the Anthropic transformer alone (the README's "preserve the original request" pass-through), CCR
2.0.0 still re-serialises the body: number spelling and spacing change (0.50 -> 0.5), and "stream": false is added
when the client did not send it. Values survive (SHOULD-level: Claude Code's gateway protocol asks for the bytes).
Source: packages/core/src/server.ts (preHandler: `if (!body.stream) body.stream = false`); packages/core/src/utils/
request.ts sendUnifiedRequest (`body: JSON.stringify(request)`).
Run: python3 body_reserialized.py   (starts a stub Anthropic provider and CCR; see README.md)"""
import sys

from ccrstub import CCR, Stub

def answer(path, body):
    return 200, {"content-type": "application/json"}, (
        b'{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":'
        b'[{"type":"text","text":"Hi."}],"stop_reason":"end_turn","stop_sequence":null,'
        b'"usage":{"input_tokens":9,"output_tokens":2}}')


stub = Stub(answer)
ccr = CCR("anthropic", stub.url)
try:
    sent = (b'{"model": "claude-sonnet-4-5-20250929", "max_tokens": 1024,  "temperature": 0.50, '
            b'"messages": [{"role": "user", "content": "Say hello."}]}')
    status, _, _ = ccr.post("/v1/messages", sent)
    got = stub.raw[-1]
    print(f"client sent:       {sent.decode()}")
    print(f"provider received: {got.decode()}  (status {status})")
    present = got != sent
finally:
    ccr.stop()
    stub.close()
print("PRESENT: body re-serialised, stream:false added" if present else "fixed")
sys.exit(1 if present else 0)
