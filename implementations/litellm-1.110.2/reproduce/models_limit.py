"""GET /v1/models?limit=1 lists every model: the `limit` of Anthropic's List Models is ignored.

Rule: anthropic/models/limit-one (MUST, FAIL). (How many it lists is the config's: 4 models here.)
"""
import anthropic
from stub import KEY, Stub, gateway, http, verdict

stub = Stub()
with gateway(stub) as gw:
    st, _, body = http("GET", gw + "/v1/models?limit=1", headers={"anthropic-version": "2023-06-01",
                                                                   "authorization": None, "x-api-key": KEY})
    page = anthropic.Anthropic(base_url=gw, api_key=KEY, max_retries=0).models.list(limit=1)
ids = [m.id for m in page.data]
print("request: GET /v1/models?limit=1 (anthropic-python models.list(limit=1))")
print("provider received:", len(stub.calls), "calls")
print(f"client got: {st}, {len(ids)} models: {ids}, has_more={getattr(page, 'has_more', None)}")
verdict(len(ids) > 1, f"limit=1 answered with {len(ids)} models")
