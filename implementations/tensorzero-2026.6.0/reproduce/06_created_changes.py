"""TensorZero stamps each chunk's `created` with the time it converts that chunk, so a stream that lasts past a second
boundary changes `created` mid-stream; OpenAI's chunks all carry the completion's creation time. The catalog sees it
only when a stream happens to cross a second (openai/streaming/rechunked-unicode, stream_order's created check);
here the stub pauses 1.1 s between chunks so it always shows.
Source: crates/tensorzero-core/src/endpoints/openai_compatible/types/streaming.rs (`created: current_timestamp() as u32`).
    python3 06_created_changes.py"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, openai_chunks, verdict

events = openai_chunks([{"role": "assistant", "content": ""}, {"content": "Hel"}, {"content": "lo."}], usage=False)
with gateway(lambda path, body: Reply(events=events, pause=1.1)) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    created = [c.created for c in client.chat.completions.create(
        model=OPENAI, messages=[{"role": "user", "content": "hi"}], stream=True)]
print(f"expected one `created` for the whole stream; got {created}")
sys.exit(verdict(len(set(created)) > 1, "`created` changes between chunks of one stream"))
