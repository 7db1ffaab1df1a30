"""Native /v1/responses: the provider's error `code` is replaced by the HTTP status as a string, e.g. OpenAI's
404 previous_response_not_found reaches the client as code "404" (message prefixed litellm.NotFoundError).

No rule fails this case (catalog gap, peer-claims-checked M4); responses/errors/context-length-code (WARN) is one
instance of it (context_length_code.py).
"""
import openai
from stub import KEY, Stub, gateway, verdict

stub = Stub()
with gateway(stub) as gw:
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).responses.create(
            model="gpt-test", input="Which word?", previous_response_id="resp_gc_unknown_0001"); got = None
    except openai.APIStatusError as e: got = e
up = stub.calls[0]
print("request: responses.create(model=gpt-test, previous_response_id=resp_gc_unknown_0001)")
print("provider received previous_response_id =", up["body"].get("previous_response_id"),
      "and answered 404 code previous_response_not_found")
print(f"client got: {type(got).__name__} status={got.status_code} code={got.code!r} message={got.message[:90]!r}")
verdict(got.code != "previous_response_not_found", "the provider's error code is replaced by the HTTP status")
