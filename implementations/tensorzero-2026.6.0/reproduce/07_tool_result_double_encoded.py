"""A `tool` message's string content reaches the provider JSON-encoded a second time: `{"temperature_c": 7}` arrives
as `"{\"temperature_c\": 7}"` (quotes and backslashes included), `Sunny` as `"Sunny"`; an array of text parts
arrives as the JSON text of the array. Same for the OpenAI and Anthropic providers. Rule:
openai/tools/tool-result-reaches-provider. Source: crates/tensorzero-core/src/endpoints/openai_compatible/types/
chat_completions.rs openai_messages_to_input (`result: msg.content.unwrap_or_default().to_string()`:
serde_json::Value::to_string serialises a JSON string with its quotes).
    python3 07_tool_result_double_encoded.py"""
import sys

import openai
from tzstub import CLAUDE, OPENAI, Reply, anthropic_message, gateway, openai_completion, verdict

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
RESULT = '{"temperature_c": 7}'


def answer(path, body):
    return Reply(body=anthropic_message() if path.endswith("/messages") else openai_completion())


def sent(request):
    if request["path"].endswith("/messages"):
        return request["body"]["messages"][2]["content"][0]["content"]
    return request["body"]["messages"][2]["content"]


present = False
with gateway(answer) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    for model in (OPENAI, CLAUDE):
        client.chat.completions.create(model=model, tools=TOOLS, messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_w1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_w1", "content": RESULT}])
        got = sent(stub.requests[-1])
        text = got if isinstance(got, str) else got[0]["text"]
        present |= text != RESULT
        print(f"{model}: client's tool content {RESULT!r}; provider received {got!r}")
sys.exit(verdict(present, "tool results reach the provider JSON-encoded twice"))
