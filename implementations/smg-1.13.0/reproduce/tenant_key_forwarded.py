"""With keys of its own (--tenant-api-key TENANT:KEY beside --api-key PROVIDER_KEY, smg's documented data-plane
auth), smg sends the tenant's gateway key to the provider in place of the provider key: the caller's
Authorization always wins over the worker key (header_utils.rs extract_auth_header, "passthrough"). The provider
then refuses the request (401) and learns the gateway's credential. So smg cannot run with keys of its own that
stay private: gateway-keys is not claimable (stored runs: no key of its own, the client's key is the provider's).

No rule fails it in the stored runs (gateway-keys not claimed); anthropic/forward/client-key-not-sent would.
"""
from stub import Stub, gateway, http, verdict

PROVIDER_KEY, TENANT_KEY = "sk-openai-fake-key", "sk-gw-tenant-key"
stub = Stub()
with gateway(stub, "openai", extra=("--api-key", PROVIDER_KEY, "--tenant-api-key", "team:" + TENANT_KEY)) as gw:
    st, _, _ = http("POST", gw + "/v1/chat/completions", {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
                    {"authorization": f"Bearer {TENANT_KEY}"})
sent = stub.posts("/v1/chat/completions")[-1]["headers"].get("authorization") or \
       stub.posts("/v1/chat/completions")[-1]["headers"].get("Authorization")
print(f"request: POST /v1/chat/completions with the tenant key {TENANT_KEY} (client got {st})")
print(f"  expected the provider to receive Bearer {PROVIDER_KEY}, got {sent}")
verdict(TENANT_KEY in (sent or ""), "the gateway's tenant key is forwarded to the provider")
