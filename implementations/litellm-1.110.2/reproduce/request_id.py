"""No answer carries `x-request-id` (OpenAI's request-id header, which openai-python exposes as `_request_id`);
LiteLLM sends `x-litellm-call-id` and, when the provider sent one, the provider's `request-id`.

Rules: openai/response/request-id-header, openai/errors/request-id-on-errors (SHOULD, WARN).
"""
import openai
from stub import KEY, Stub, anthropic_error, gateway, http, verdict

stub = Stub(lambda m, p, b: anthropic_error(500, "api_error", "Internal error.")
            if p == "/v1/messages" and "fail" in str(b) else None)
with gateway(stub) as gw:
    ok = http("POST", gw + "/v1/chat/completions", {"model": "claude-test", "max_tokens": 16,
              "messages": [{"role": "user", "content": "hi"}]})
    err = http("POST", gw + "/v1/chat/completions", {"model": "claude-test", "max_tokens": 16,
               "messages": [{"role": "user", "content": "fail"}]})
    rid = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).chat.completions.create(
        model="claude-test", max_tokens=16, messages=[{"role": "user", "content": "hi"}])._request_id
print("request: POST /v1/chat/completions, answered 200 and (provider 500) an error")
for name, (st, h, _) in (("success", ok), ("error", err)):
    h = {k.lower(): v for k, v in h.items()}
    print(f"client got ({name}, {st}): x-request-id={h.get('x-request-id')!r} request-id={h.get('request-id')!r} "
          f"x-litellm-call-id={h.get('x-litellm-call-id')!r}")
print("openai-python completion._request_id:", repr(rid))
verdict(not any("x-request-id" in {k.lower() for k in r[1]} for r in (ok, err)), "no x-request-id header")
