"""/v1/responses removes every `reasoning` input item before calling the provider (route.rs: items.retain(!Reasoning)),
so a stateless client's encrypted reasoning (store false + include ["reasoning.encrypted_content"], the Agents SDK's
and Codex's ZDR mode) never returns to OpenAI: the model loses its reasoning across turns.

Rules: responses/request/reasoning-item-not-dropped (SHOULD, WARN); responses/request/encrypted-reasoning-round-trips
(MUST, FAIL when reasoning-items is claimed; not claimed in the stored run: smg's docs do not claim it).
"""
import openai
from stub import KEY, Stub, gateway, response_object, verdict

ENC = "gAAAAB-stub-encrypted-reasoning-0001"
def handler(m, p, b):
    if p == "/v1/responses":
        r = response_object(model=b.get("model"), text="Yes, 1009 is prime.")
        r["output"].insert(0, {"type": "reasoning", "id": "rs_stub_1", "summary": [], "encrypted_content": ENC})
        return 200, {}, r
stub = Stub(handler)
with gateway(stub, "openai") as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    first = c.responses.create(model="gpt-5.5", input="Is 1009 prime?", store=False,
                               include=["reasoning.encrypted_content"], reasoning={"effort": "medium"})
    items = [o.model_dump(exclude_none=True) for o in first.output]
    c.responses.create(model="gpt-5.5", store=False, include=["reasoning.encrypted_content"],
                       input=[{"role": "user", "content": "Is 1009 prime?"}, *items,
                              {"role": "user", "content": "And 1013?"}])
sent = stub.posts("/v1/responses")[-1]["body"]["input"]
reasoning = [i for i in sent if isinstance(i, dict) and i.get("type") == "reasoning"]
print("turn 1: the client got a reasoning item with encrypted_content:",
      any(i.get("encrypted_content") == ENC for i in items))
print("turn 2: the client sends it back in input; expected the provider to receive it, got input types:",
      [i.get("type", "message") for i in sent], "| reasoning items:", reasoning)
verdict(not reasoning, "the reasoning input item is dropped before the provider call")
