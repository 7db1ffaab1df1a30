"""A provider 429's `Retry-After` does not reach the client, on /v1/chat/completions, /v1/responses and /v1/messages:
smg rebuilds the error answer with its own headers (chat: content-type only; responses and messages: none of the
provider's), so the SDKs fall back to their own short back-off instead of the provider's delay.

Rules: openai/errors/retry-after-kept, responses/errors/retry-after-kept, anthropic/errors/retry-after-kept (SHOULD, WARN).
"""
from stub import ANT_KEY, Stub, gateway, http, openai_error, verdict

def handler(m, p, b):
    if p in ("/v1/chat/completions", "/v1/responses"):
        return openai_error(429, "Rate limit reached. Please try again in 2s.", "requests", "rate_limit_exceeded",
                            {"retry-after": "2"})
    if p == "/v1/messages":
        return 429, {"retry-after": "2"}, {"type": "error", "error": {"type": "rate_limit_error",
                                                                       "message": "Rate limited."}}
got = {}
stub = Stub(handler)
with gateway(stub, "openai") as gw:
    for path, body in (("/v1/chat/completions", {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}),
                       ("/v1/responses", {"model": "gpt-5.5", "input": "hi"})):
        st, h, _ = http("POST", gw + path, body)
        got[path] = (st, h.get("retry-after"))
stub = Stub(handler)
with gateway(stub, "anthropic") as gw:
    st, h, _ = http("POST", gw + "/v1/messages", {"model": "claude-sonnet-4-5-20250929", "max_tokens": 16,
                    "messages": [{"role": "user", "content": "hi"}]},
                    {"authorization": None, "x-api-key": ANT_KEY, "anthropic-version": "2023-06-01"})
    got["/v1/messages"] = (st, h.get("retry-after"))
print("request: one per path; the provider answers 429 with retry-after: 2")
for p, (st, ra) in got.items():
    print(f"  {p}: expected 429 with retry-after: 2, got {st} with retry-after: {ra}")
verdict(any(ra is None for _, ra in got.values()), "the provider's Retry-After is not passed to the client")
