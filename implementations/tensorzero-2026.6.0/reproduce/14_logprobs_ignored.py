"""(SHOULD) `logprobs: true` (and top_logprobs) is neither honoured nor refused: TensorZero drops unknown fields with a
log warning and answers 200 without choices[].logprobs, so the client cannot tell it was ignored. Rule:
openai/output/logprobs-honoured-or-refused (WARN). Source: crates/tensorzero-core/src/endpoints/openai_compatible/
chat_completions.rs chat_completions_handler ("Ignoring unknown fields in OpenAI-compatible request"; refusal only
with tensorzero::deny_unknown_fields).
    python3 14_logprobs_ignored.py"""
import sys

import openai
from tzstub import SAMPLING, Reply, gateway, openai_completion, verdict

with gateway(lambda path, body: Reply(body=openai_completion(model="gpt-4.1"))) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    got = client.chat.completions.create(model=SAMPLING, logprobs=True, top_logprobs=2,
                                         messages=[{"role": "user", "content": "hi"}])
    sent = stub.requests[-1]["body"]
print(f"expected logprobs honoured (choices[0].logprobs) or a 400; got 200, logprobs {got.choices[0].logprobs!r}; "
      f"provider received logprobs={sent.get('logprobs')!r}")
sys.exit(verdict(got.choices[0].logprobs is None, "logprobs silently ignored"))
