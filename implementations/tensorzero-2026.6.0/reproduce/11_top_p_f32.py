"""(SHOULD) top_p 0.9 reaches the provider as 0.8999999761581421 (and temperature 0.7 as 0.699999988079071): the
OpenAI-compatible parameters are parsed as f32 and widened back to f64. Rule: openai/request/top-p-reaches-provider
(WARN). Source: crates/tensorzero-core/src/endpoints/openai_compatible/types/chat_completions.rs OpenAICompatibleParams
(`temperature: Option<f32>`, `top_p: Option<f32>`, penalties f32).
    python3 11_top_p_f32.py"""
import sys

import openai
from tzstub import SAMPLING, Reply, gateway, openai_completion, verdict

with gateway(lambda path, body: Reply(body=openai_completion(model="gpt-4.1"))) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    client.chat.completions.create(model=SAMPLING, top_p=0.9, temperature=0.7,
                                   messages=[{"role": "user", "content": "hi"}])
    sent = stub.requests[-1]["body"]
print(f"expected top_p 0.9, temperature 0.7; provider received top_p {sent.get('top_p')!r}, "
      f"temperature {sent.get('temperature')!r}")
sys.exit(verdict(sent.get("top_p") != 0.9, "sampling parameters lose precision (f32)"))
