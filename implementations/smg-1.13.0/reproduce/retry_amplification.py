"""On /v1/chat/completions one provider 429 (or 500/502/503/504/408) becomes five provider calls: smg retries at its
defaults (--retry-max-retries 5, 50 ms back-off), without waiting the provider's Retry-After, and the SDK's own
retries multiply that (openai-python's default max_retries=2: 15 provider calls for one create()).

No rule fails it (catalog gap): no rule counts upstream calls after a provider 429/5xx. Set-up: smg's defaults.
"""
import time
import openai
from stub import KEY, Stub, gateway, openai_error, verdict

stub = Stub(lambda m, p, b: openai_error(429, "Rate limit reached. Please try again in 2s.", "requests",
                                         "rate_limit_exceeded", {"retry-after": "2"}))
with gateway(stub, "openai") as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    t0 = time.time()
    try:
        c.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
    except openai.RateLimitError:
        pass
    one, dt = len(stub.posts("/v1/chat/completions")), time.time() - t0
    stub.calls.clear()
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key=KEY).chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
    except openai.RateLimitError:
        pass
    sdk = len(stub.posts("/v1/chat/completions"))
print("request: chat.completions.create; the provider answers 429 with retry-after: 2")
print(f"  max_retries=0: expected 1 provider call, got {one} in {dt:.2f} s (the provider asked for 2 s)")
print(f"  SDK default max_retries=2: expected 3 provider calls, got {sdk}")
verdict(one > 1, f"one client request made {one} provider calls")
