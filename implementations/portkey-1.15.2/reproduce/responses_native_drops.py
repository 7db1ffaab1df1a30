"""Native /v1/responses (routed as provider openai): prompt_cache_retention and context_management (and unknown
fields) are dropped before the provider; the other OpenAI fields sent alongside reach it.

No rule fails it (catalog gap, peer-claims-checked M2): responses/request/openai-parameters-accepted only checks the
answer. Losing prompt_cache_retention costs cache hits (Codex-style clients send it), not correctness.
"""
from stub import NATIVE, Stub, gateway, http, verdict

REQ = {"model": "gpt-5.5", "input": "hi", "prompt_cache_retention": "24h",
       "context_management": [{"type": "compaction", "compact_threshold": 200000}], "x_future_field": 1,
       "prompt_cache_key": "s-1", "conversation": "conv_stub_0001", "safety_identifier": "u-1",
       "text": {"verbosity": "low"}, "service_tier": "default", "truncation": "auto", "max_tool_calls": 3}
stub = Stub()
with gateway(stub) as gw:
    st, _, _ = http("POST", gw + "/v1/responses", REQ, NATIVE)
up = stub.posts("/v1/responses")[0]["body"]
lost = sorted(set(REQ) - set(up))
print("request: POST /v1/responses (x-portkey-provider: openai)", sorted(REQ))
print("provider received:", sorted(up))
print("client got:", st, "; dropped:", lost)
verdict("prompt_cache_retention" in lost or "context_management" in lost, f"dropped before the provider: {lost}")
