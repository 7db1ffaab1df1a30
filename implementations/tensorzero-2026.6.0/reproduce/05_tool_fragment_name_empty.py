"""Every continuation fragment of a streamed tool call carries `"function": {"name": ""}` and `"type": "function"`
(id null), where OpenAI's later fragments carry only the index and arguments. Harmless to openai-python (it appends
"" to the name; printed below); a client that takes a present `name` as the call's name loses it. Rules:
openai/tools/first-fragment-then-arguments, parallel-indexes, index-from-zero-after-text, openai/streaming/
data-lines-only (MUST) and openai/tools/continuation-type-not-repeated (SHOULD).
Source: crates/tensorzero-core/src/endpoints/openai_compatible/types/streaming.rs process_chat_content_chunk
(`r#type: "function"`, `name: tool_call.raw_name.unwrap_or_default()`).
    python3 05_tool_fragment_name_empty.py"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, openai_chunks, verdict

first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
deltas = [{"role": "assistant", "content": None, "tool_calls": [first]},
          {"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]},
          {"tool_calls": [{"index": 0, "function": {"arguments": ' "Oslo"}'}}]}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
with gateway(lambda path, body: Reply(events=openai_chunks(deltas, finish="tool_calls"))) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    args = dict(model=OPENAI, messages=[{"role": "user", "content": "Weather in Oslo?"}], tools=TOOLS)
    raw = [c.model_dump(exclude_unset=True) for c in client.chat.completions.create(stream=True, **args)]
    with client.chat.completions.stream(**args) as stream:
        final = stream.get_final_completion()
fragments = [tc for c in raw for ch in c.get("choices", []) for tc in ch["delta"].get("tool_calls") or []]
later = fragments[1:]
print("expected continuation fragments: {index, function: {arguments}} only; got:")
for f in later:
    print("  ", f)
call = final.choices[0].message.tool_calls[0]
print(f"openai-python's accumulated call: name={call.function.name!r} arguments={call.function.arguments!r}")
present = any("name" in f.get("function", {}) for f in later)
sys.exit(verdict(present, 'continuation fragments carry function.name "" (and type)'))
