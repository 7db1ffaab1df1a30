"""With stream_options.include_usage TensorZero puts the usage on the finish chunk (which has a choice) and sends no
final `choices: []` chunk, where OpenAI sends one. A client that reads usage from the chunk whose choices are empty
(OpenAI's documented shape) gets none. Rules: openai/streaming/usage-chunk, openai/streaming/same-id.
Source: crates/tensorzero-core/src/endpoints/inference.rs create_stream (final chunk = finish_reason + usage);
endpoints/openai_compatible/types/streaming.rs convert_inference_response_chunk_to_openai_compatible (every chunk
gets `choices: vec![...]`).
    python3 04_stream_usage_on_finish_chunk.py"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, openai_chunks, verdict

events = openai_chunks([{"role": "assistant", "content": ""}, {"content": "Hello."}])
with gateway(lambda path, body: Reply(events=events)) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    chunks = list(client.chat.completions.create(model=OPENAI, messages=[{"role": "user", "content": "hi"}],
                                                 stream=True, stream_options={"include_usage": True}))
with_usage = [(len(c.choices), c.choices[0].finish_reason if c.choices else None) for c in chunks if c.usage]
usage_chunk = [c.usage for c in chunks if not c.choices and c.usage]
print("upstream (OpenAI) sent a finish chunk, then a choices-[] chunk with the usage")
print(f"expected: one chunk with choices [] and usage; got usage on chunks (n choices, finish_reason): {with_usage}")
print("usage read as OpenAI documents it (`if not chunk.choices: chunk.usage`):", usage_chunk or None)
sys.exit(verdict(not usage_chunk, "no choices-[] usage chunk; usage rides on the finish chunk"))
