"""Native /v1/responses (gpt-test): `conversation` (OpenAI's Conversations API) is dropped before the provider,
so the answer comes without the conversation; the other OpenAI fields sent alongside do reach it.

No rule fails it (catalog gap, peer-claims-checked M3).
"""
from stub import Stub, gateway, http, verdict

REQ = {"model": "gpt-test", "input": "Which word?", "conversation": "conv_stub_0001", "prompt_cache_key": "s-1",
       "prompt_cache_retention": "24h", "safety_identifier": "u-1", "text": {"verbosity": "low"}, "x_unknown": 1}
stub = Stub()
with gateway(stub) as gw:
    st, _, _ = http("POST", gw + "/v1/responses", REQ)
up = stub.posts("/v1/responses")[0]["body"]
print("request: POST /v1/responses", sorted(REQ))
print("provider received:", sorted(up))
print("client got:", st, "; dropped:", sorted(set(REQ) - set(up)))
verdict("conversation" not in up, "conversation not sent to the provider")
