"""An unknown model is answered 400 invalid_request_error, not 404 not_found_error (the gateway's router).

Rules: anthropic/errors/unknown-model-404 (MUST, FAIL), openai/errors/unknown-model (SHOULD, WARN).
"""
import anthropic, openai
from stub import KEY, Stub, gateway, http, short, verdict

stub = Stub()
with gateway(stub) as gw:
    m = "gc-model-that-does-not-exist"
    s1, _, b1 = http("POST", gw + "/v1/messages", {"model": m, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]},
                     {"authorization": None, "x-api-key": KEY, "anthropic-version": "2023-06-01"})
    s2, _, b2 = http("POST", gw + "/v1/chat/completions", {"model": m, "messages": [{"role": "user", "content": "hi"}]})
    try:
        anthropic.Anthropic(base_url=gw, api_key=KEY, max_retries=0).messages.create(
            model=m, max_tokens=16, messages=[{"role": "user", "content": "hi"}]); a = "no exception"
    except anthropic.APIStatusError as e: a = type(e).__name__
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).chat.completions.create(
            model=m, messages=[{"role": "user", "content": "hi"}]); o = "no exception"
    except openai.APIStatusError as e: o = type(e).__name__
print(f"request: model={m} on POST /v1/messages and /v1/chat/completions")
print("provider received:", len(stub.calls), "calls")
print("client got: /v1/messages", s1, short(b1, 200)); print("            /v1/chat/completions", s2, short(b2, 200))
print(f"anthropic-python raised {a} (expected NotFoundError); openai-python raised {o} (expected NotFoundError)")
verdict(s1 != 404 or s2 != 404, f"unknown model -> {s1} / {s2}, expected 404")
