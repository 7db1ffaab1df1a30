"""Native /v1/responses (gpt-test = openai/gpt-5.5): GET and DELETE of a response id LiteLLM did not issue are
400 "You passed in model=None" instead of the provider's 404 (its ids encode the deployment; a foreign one names
none, so nothing is sent upstream). Its own ids are forwarded and work.

Rules: responses/state/retrieve-unknown-404, responses/state/delete-unknown-404 (MUST, FAIL).
"""
import json
import openai
from stub import KEY, Stub, gateway, http, short, verdict

stub = Stub()
with gateway(stub) as gw:
    _, _, b = http("POST", gw + "/v1/responses", {"model": "gpt-test", "input": "hi"})
    own = json.loads(b)["id"]
    g_own = http("GET", gw + "/v1/responses/" + own)[0]
    g = http("GET", gw + "/v1/responses/resp_gc_unknown_0000")
    d = http("DELETE", gw + "/v1/responses/resp_gc_unknown_0000")
    try: openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).responses.retrieve("resp_gc_unknown_0000"); sdk = "no exception"
    except openai.APIStatusError as e: sdk = type(e).__name__
up = [(c["method"], c["path"]) for c in stub.calls]
print(f"request: GET /v1/responses/<its own id, {len(own)} chars> -> {g_own}")
print("request: GET /v1/responses/resp_gc_unknown_0000 ->", g[0], short(g[2], 150))
print("request: DELETE /v1/responses/resp_gc_unknown_0000 ->", d[0])
print("provider received:", up)
print("openai-python responses.retrieve raised", sdk, "(expected NotFoundError)")
verdict(g[0] == 400 or d[0] == 400, "a foreign id is 400 model=None, not 404")
