"""/v1/responses refuses, before any provider call, parameters openai-python 3.57 sends: prompt_cache_retention
"in_memory" (the SDK's Literal["in_memory", "24h"]; smg's enum knows only "in-memory" and "24h") and
prompt_cache_options (the SDK's newer field: smg's ResponsesRequest refuses every field it does not declare,
"unknown field"), each a 400 json_parse_error. OpenAI accepts both.

Rule: responses/request/openai-parameters-accepted (MUST, FAIL: prompt_cache_retention in_memory). prompt_cache_options
and unknown fields in general: no rule (catalog gap).
"""
import openai
from stub import KEY, Stub, gateway, verdict

stub = Stub()
got = {}
with gateway(stub, "openai") as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    for name, kw in (("prompt_cache_retention='in_memory'", {"prompt_cache_retention": "in_memory"}),
                     ("prompt_cache_retention='24h'", {"prompt_cache_retention": "24h"}),
                     ("prompt_cache_options={'ttl': '30m'}", {"prompt_cache_options": {"ttl": "30m"}})):
        n = len(stub.posts("/v1/responses"))
        try:
            c.responses.create(model="gpt-5.5", input="hi", **kw)
            got[name] = ("200", len(stub.posts("/v1/responses")) - n)
        except openai.APIStatusError as e:
            got[name] = (f"{e.status_code} {e.message.split('target type: ')[-1][:90]}", len(stub.posts("/v1/responses")) - n)
print("request: client.responses.create(model='gpt-5.5', input='hi', <parameter>) with openai-python", openai.__version__)
for k, (res, calls) in got.items():
    print(f"  {k}: expected 200 (OpenAI accepts it), got {res}; provider calls: {calls}")
verdict(any(not r.startswith("200") for r, _ in got.values()), "a parameter OpenAI accepts is refused")
