"""A provider 429's `Retry-After` does not reach the client: LiteLLM sends it as `llm_provider-retry-after`, which
no SDK reads; openai-python then retries on its own short back-off instead of the provider's 7 s.

Rules: openai/errors/retry-after-kept, anthropic/errors/retry-after-kept, responses/errors/retry-after-kept (SHOULD, WARN).
"""
import time
import openai
from stub import KEY, Stub, anthropic_error, gateway, http, verdict

stub = Stub(lambda m, p, b: anthropic_error(429, "rate_limit_error", "Rate limited.", {"retry-after": "7"})
            if p == "/v1/messages" else None)
hdr = {}
with gateway(stub) as gw:
    for path, body, h in (("/v1/chat/completions", {"model": "claude-test", "max_tokens": 16,
                           "messages": [{"role": "user", "content": "hi"}]}, {}),
                          ("/v1/messages", {"model": "claude-test", "max_tokens": 16,
                           "messages": [{"role": "user", "content": "hi"}]}, {"anthropic-version": "2023-06-01"}),
                          ("/v1/responses", {"model": "claude-test", "input": "hi", "max_output_tokens": 16}, {})):
        st, headers, _ = http("POST", gw + path, body, h)
        hdr[path] = (st, {k.lower(): v for k, v in headers.items() if "retry-after" in k.lower()})
    n0, t0 = len(stub.calls), time.time()
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=1).chat.completions.create(
            model="claude-test", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    except openai.RateLimitError:
        pass
    waited = time.time() - t0
print("request: one request per path; the provider answers 429 rate_limit_error with retry-after: 7")
for p, (st, h) in hdr.items(): print(f"client got: {p} {st}, retry-after headers: {h}")
print(f"openai-python (max_retries=1): {len(stub.calls) - n0} provider calls in {waited:.1f} s (the provider asked for 7 s)")
verdict(any("retry-after" not in h for _, h in hdr.values()), "Retry-After not passed to the client")
