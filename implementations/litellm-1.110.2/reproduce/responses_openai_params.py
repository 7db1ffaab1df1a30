"""Bridged /v1/responses: Codex's prompt_cache_key, prompt_cache_retention and text.verbosity are refused for an
Anthropic model with drop_params false (400 UnsupportedParamsError, nothing sent); with drop_params true
(claude-test-drop) the request is answered and the three are not sent on.

Rule: responses/request/openai-parameters-accepted (MUST, FAIL). Set-up: drop_params false is this set-up's choice.
"""
from stub import Stub, gateway, http, short, verdict

REQ = {"input": "hi", "max_output_tokens": 16, "store": False, "prompt_cache_key": "session-1234",
       "prompt_cache_retention": "24h", "text": {"verbosity": "low"}}
stub = Stub()
out = {}
with gateway(stub) as gw:
    for model in ("claude-test", "claude-test-drop"):
        n = len(stub.calls)
        st, _, body = http("POST", gw + "/v1/responses", dict(REQ, model=model))
        out[model] = (st, body, stub.calls[n:])
print("request: POST /v1/responses", short(REQ, 200))
for model, (st, body, calls) in out.items():
    print(f"  {model}: client got {st} {short(body, 160) if st != 200 else ''}")
    print(f"  {model}: provider received {'nothing' if not calls else sorted(calls[0]['body'])}")
verdict(out["claude-test"][0] == 400, "refused with drop_params false")
