"""With --api-key (smg's documented data-plane key; in launch mode the same key is the provider's), GET /v1/models
answers 503 no_models_available although the provider's models were discovered and are served: for a caller
presenting a gateway key, smg lists its registry models excluding external workers (router_manager.rs
get_models -> registry_models_response), and an OpenAI/Anthropic backend has only external workers.
openai-python's models.list() retries the 503 twice, then raises InternalServerError.

No rule fails it in the stored runs (no --api-key there: the BYOK listing passes openai/models/*); with --api-key
openai/models/list-shape, entry-fields, lists-the-model and responses/models/* fail.
"""
import openai
from stub import KEY, Stub, gateway, verdict

stub = Stub()
with gateway(stub, "openai", extra=("--api-key", KEY)) as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    chat = c.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}]).choices[0].message.content
    try:
        got = "200 " + str([m.id for m in c.models.list().data])
    except openai.APIStatusError as e:
        got = f"{e.status_code} {e.message[:80]}"
print(f"request: chat.completions.create(model='gpt-4.1') answered {chat!r}; then models.list()")
print(f"  expected 200 listing gpt-4.1, got {got}")
verdict(not got.startswith("200"), "GET /v1/models is 503 with --api-key")
