"""(SHOULD) A model the gateway does not serve is 400 "Invalid inference target: ... not found in model table", where
OpenAI answers 404 model_not_found (openai-python: NotFoundError). TensorZero has ModelNotFound -> 404, but the
model lookup's error (model_table.rs: Config "Model name '...' not found in model table") is wrapped as
InvalidInferenceTarget "Invalid model name" (endpoints/inference.rs), which tensorzero-error maps to 400. Rule:
openai/errors/unknown-model (WARN).
    python3 13_unknown_model_400.py"""
import sys

import openai
from tzstub import Reply, gateway, openai_completion, verdict

with gateway(lambda path, body: Reply(body=openai_completion())) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    try:
        client.chat.completions.create(model="tensorzero::model_name::gc-model-that-does-not-exist",
                                       messages=[{"role": "user", "content": "hi"}])
        status, name, message = 200, "none", ""
    except openai.APIStatusError as e:
        status, name, message = e.status_code, type(e).__name__, e.message
print(f"expected 404 NotFoundError; got {status} {name}: {message[:100]}")
sys.exit(verdict(status != 404, "unknown model answered 400, not 404"))
