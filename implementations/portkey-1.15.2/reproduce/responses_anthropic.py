"""/v1/responses routed to provider anthropic: every request is 500 {"status":"failure","message":
"createModelResponse is not supported by anthropic"} (stream or not, with or without a key); a non-JSON body is a
500 "Something went wrong" (corrected wording, peer-claims-checked M7). Nothing reaches the provider. Portkey's docs
say the Responses API works with every provider; the open-source 1.15.2 build has no Responses path for anthropic.

Rules: every `responses` rule on this set-up (responses/request/bearer-accepted and 90 more).
"""
import openai
from stub import KEY, Stub, gateway, http, short, verdict

stub = Stub()
out = []
with gateway(stub) as gw:
    body = {"model": "claude-sonnet-4-5-20250929", "input": "hi", "max_output_tokens": 64}
    out.append(("json", http("POST", gw + "/v1/responses", body)))
    out.append(("json stream", http("POST", gw + "/v1/responses", dict(body, stream=True))))
    out.append(("json no key", http("POST", gw + "/v1/responses", body, {"authorization": None})))
    out.append(("not JSON", http("POST", gw + "/v1/responses", raw='{"model": ')))
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).responses.create(**body); sdk = "no exception"
    except openai.APIStatusError as e: sdk = f"{type(e).__name__} {e.status_code}"
for name, (st, h, b) in out:
    print(f"request: POST /v1/responses ({name}) -> client got {st} {short(b, 110)}")
print("openai-python responses.create raised:", sdk, "; provider received:", len(stub.calls), "calls")
verdict(any(st == 500 for _, (st, _, _) in out), "/v1/responses to anthropic is a 500")
