"""A streamed /v1/responses answer whose UTF-8 bytes arrive split inside a character (an ordinary TCP read boundary)
reaches the client with U+FFFD replacement characters: smg decodes each network chunk on its own with
String::from_utf8_lossy (responses/common.rs ChunkProcessor::push_chunk) before joining the SSE lines.
openai-python's stream then yields corrupted deltas and output_text.done text.

Rule: responses/streaming/rechunked-unicode (MUST, FAIL). /v1/chat/completions and /v1/messages relay bytes and keep it.
"""
import json
import openai
from stub import KEY, Stub, gateway, response_object, verdict

TEXT = "Grüße aus Zürich — こんにちは 🚀"
def sse():
    r0 = response_object(text=None, status="in_progress")
    ev = [("response.created", {"type": "response.created", "response": r0}),
          ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": {
              "id": "msg_stub_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
          ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_stub_1",
                                          "output_index": 0, "content_index": 0, "delta": TEXT}),
          ("response.output_text.done", {"type": "response.output_text.done", "item_id": "msg_stub_1",
                                         "output_index": 0, "content_index": 0, "text": TEXT}),
          ("response.completed", {"type": "response.completed", "response": response_object(text=TEXT)})]
    raw = b"".join(f"event: {e}\ndata: {json.dumps(dict(d, sequence_number=i), ensure_ascii=False)}\n\n".encode()
                   for i, (e, d) in enumerate(ev))
    cuts = [raw.index("ü".encode()) + 1, raw.index("こ".encode()) + 2, raw.index("🚀".encode()) + 3]
    return [raw[a:b] for a, b in zip([0] + cuts, cuts + [len(raw)])]   # pieces split inside characters
stub = Stub(lambda m, p, b: (200, {}, sse()) if p == "/v1/responses" else None)
with gateway(stub, "openai") as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    deltas = "".join(e.delta for e in c.responses.create(model="gpt-5.5", input="hi", stream=True)
                     if e.type == "response.output_text.delta")
print("request: responses.create(stream=True); the provider streams", repr(TEXT), "split inside 3 characters")
print("  expected deltas joined:", repr(TEXT))
print("  got deltas joined:     ", repr(deltas))
verdict(deltas != TEXT, "multi-byte characters split across network reads are replaced by U+FFFD")
