"""(SHOULD) No answer carries an `x-request-id` header (OpenAI sends one; openai-python exposes it as `_request_id`),
though the provider sent one. Rule: openai/response/request-id-header (WARN); openai/errors/request-id-on-errors
(WARN, also on errors). Source: crates/tensorzero-core/src/endpoints/openai_compatible/chat_completions.rs (the
answer is Json(...)/Sse(...) with no such header).
    python3 12_request_id_header.py"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, openai_completion, verdict

with gateway(lambda path, body: Reply(body=openai_completion(), headers={"x-request-id": "req_stub123"})) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model=OPENAI, messages=[{"role": "user", "content": "hi"}])
print(f"expected an x-request-id header; got {raw.headers.get('x-request-id')!r} (headers: {sorted(raw.headers)})")
sys.exit(verdict(raw.headers.get("x-request-id") is None, "no x-request-id on answers"))
