"""After an error in the middle of a stream TensorZero writes the error event and then goes on: one more ordinary
chunk (empty delta, finish_reason null) and data: [DONE], so the error is not the stream's last event. From an
OpenAI upstream, OpenAI's own in-stream error event ({"error": {...}}) is not recognised: the client gets "Error
parsing chunk ... missing field `choices`" instead of the provider's message. Rule: openai/errors/mid-stream-error-event.
Source: crates/tensorzero-core/src/endpoints/openai_compatible/types/streaming.rs prepare_serialized_openai_compatible_events
(yield the error event, `continue`); endpoints/inference.rs create_stream (`yield Err(e); continue;` then the final
chunk); providers/openai/mod.rs stream parsing (serde into OpenAIChatChunk, "Error parsing chunk").
    python3 03_mid_stream_error.py"""
import json
import sys
import urllib.request

import openai
from tzstub import OPENAI, Reply, gateway, openai_chunks, sse_payloads, verdict

events = openai_chunks([{"role": "assistant", "content": ""}, {"content": "Line 1\n"}], usage=False)[:2]
events.append(json.dumps({"error": {"message": "Overloaded", "type": "overloaded_error", "param": None, "code": None}}))

with gateway(lambda path, body: Reply(events=events)) as (url, stub):
    request = urllib.request.Request(url + "/chat/completions", headers={"content-type": "application/json"},
                                     data=json.dumps({"model": OPENAI, "stream": True,
                                                      "messages": [{"role": "user", "content": "Write"}]}).encode())
    payloads = sse_payloads(urllib.request.urlopen(request).read())
    try:  # openai-python raises on a data: {"error": ...} event, so its users do see the error
        list(openai.OpenAI(base_url=url, api_key="unused", max_retries=0).chat.completions.create(
            model=OPENAI, messages=[{"role": "user", "content": "Write"}], stream=True))
        print("openai-python: no exception")
    except openai.APIError as e:
        print(f"openai-python raises {type(e).__name__}: {e.message[:80]}")
at = next(i for i, p in enumerate(payloads) if p.startswith('{"error"'))
after = [p for p in payloads[at + 1:] if p != "[DONE]"]
print("error event:", payloads[at])
print("expected: the error event last (a [DONE] may follow); got after it:", after + payloads[at + 1:][len(after):])
print("provider's message 'Overloaded' kept:", "Overloaded" in payloads[at])
sys.exit(verdict(bool(after), "the stream goes on after its error event"))
