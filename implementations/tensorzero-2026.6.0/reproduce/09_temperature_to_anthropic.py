"""temperature 1.5 (valid OpenAI, 0-2) is sent to Anthropic unchanged, outside Anthropic's 0-1, so Anthropic refuses
it and the client gets a 502. Rule: openai/request/temperature-in-range. The stub answers as Anthropic does for a
temperature above 1 (400 invalid_request_error). Source: crates/tensorzero-core/src/providers/anthropic.rs (the
request's `temperature` is the inference parameter as given; no clamp or rescale).
    python3 09_temperature_to_anthropic.py"""
import sys

import openai
from tzstub import CLAUDE, Reply, anthropic_message, gateway, verdict

REFUSAL = {"type": "error", "error": {"type": "invalid_request_error", "message": "temperature: range: 0..1"}}


def answer(path, body):
    return Reply(400, REFUSAL) if body.get("temperature", 0) > 1 else Reply(body=anthropic_message())


with gateway(answer) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    try:
        client.chat.completions.create(model=CLAUDE, temperature=1.5, messages=[{"role": "user", "content": "hi"}])
        status = 200
    except openai.APIStatusError as e:
        status = e.status_code
    sent = stub.requests[-1]["body"].get("temperature")
print(f"expected: a temperature Anthropic accepts (<= 1) and 200; got temperature {sent} sent, client status {status}")
sys.exit(verdict(sent is not None and sent > 1, "temperature above 1 forwarded to Anthropic"))
