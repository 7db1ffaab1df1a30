"""safety_identifier (an OpenAI parameter) is refused for an Anthropic model with drop_params false
(400 UnsupportedParamsError), and accepted and not sent on with drop_params true (model claude-test-drop).

Rules: openai/request/safety-identifier-accepted, responses/request/safety-identifier-accepted (MUST, FAIL).
Set-up: drop_params false is this set-up's choice (LiteLLM's default); the error names the fix.
"""
from stub import Stub, gateway, http, short, verdict

stub = Stub()
res = {}
with gateway(stub) as gw:
    for model in ("claude-test", "claude-test-drop"):
        n = len(stub.calls)
        res[model, "chat"] = http("POST", gw + "/v1/chat/completions", {"model": model, "max_tokens": 16,
                                  "safety_identifier": "user-1234", "messages": [{"role": "user", "content": "hi"}]})[::2] + (stub.calls[n:],)
        n = len(stub.calls)
        res[model, "responses"] = http("POST", gw + "/v1/responses", {"model": model, "input": "hi",
                                       "max_output_tokens": 16, "safety_identifier": "user-1234"})[::2] + (stub.calls[n:],)
print("request: safety_identifier='user-1234' on /v1/chat/completions and /v1/responses")
for (model, api), (st, body, calls) in res.items():
    up = calls[0]["body"] if calls else None
    print(f"  {model:16} {api:9} client got {st} {short(body, 110) if st != 200 else ''}")
    seen = ("nothing" if up is None else "safety_identifier=" + str(up["safety_identifier"]) if "safety_identifier" in up
            else "no safety_identifier; metadata=" + short(up.get("metadata"), 80))
    print(f"  {'':16} {'':9} provider received: {seen}")
verdict(res["claude-test", "chat"][0] == 400 or res["claude-test", "responses"][0] == 400,
        "refused with drop_params false")
