"""A request body that is not JSON is answered 500 {"status":"failure","message":"Something went wrong"}, not 400,
on /v1/messages, /v1/chat/completions and /v1/responses (routed as anthropic and as openai); nothing goes upstream.
A retrying client retries it as a server error.

Rules: anthropic/errors/invalid-json-400, openai/errors/invalid-json-400, responses/errors/invalid-json-400 (MUST, FAIL).
"""
from stub import NATIVE, Stub, gateway, http, short, verdict

BAD = '{"model": "claude-sonnet-4-5-20250929", "messages": [ '
stub = Stub()
out = []
with gateway(stub) as gw:
    for path, hdr in (("/v1/messages", {"anthropic-version": "2023-06-01"}), ("/v1/chat/completions", {}),
                      ("/v1/responses", {}), ("/v1/responses (native)", NATIVE)):
        st, _, body = http("POST", gw + path.split()[0], raw=BAD, headers=hdr)
        out.append((path, st, body))
print("request: POST with the body", repr(BAD))
for p, st, body in out: print(f"client got: {p}: {st} {short(body, 120)}")
print("provider received:", len(stub.calls), "calls")
verdict(any(st >= 500 for _, st, _ in out), "a non-JSON body is a 500")
