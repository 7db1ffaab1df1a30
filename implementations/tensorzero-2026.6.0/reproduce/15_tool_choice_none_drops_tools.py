"""(catalog gap: no rule fails it) With tool_choice "none" TensorZero sends Anthropic no `tools` (and no tool_choice),
even when the history holds tool_use/tool_result blocks; Anthropic's API has answered such a request 400 "Requests
which include tool_use or tool_result blocks must define tools" (anthropics/anthropic-sdk-python#494), and has
tool_choice {"type": "none"} for this. The stub answers that 400 when tools are missing. openai/tools/
tool-choice-none passes (its history has no tool turn).
    python3 15_tool_choice_none_drops_tools.py"""
import sys

import openai
from tzstub import CLAUDE, Reply, anthropic_message, gateway, verdict

REFUSAL = {"type": "error", "error": {"type": "invalid_request_error",
                                      "message": "Requests which include tool_use or tool_result blocks must define tools."}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]


def answer(path, body):
    return Reply(body=anthropic_message()) if body.get("tools") else Reply(400, REFUSAL)


with gateway(answer) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    try:
        client.chat.completions.create(model=CLAUDE, tools=TOOLS, tool_choice="none", messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "7 C"},
            {"role": "user", "content": "Thanks, now summarise without tools."}])
        status = 200
    except openai.APIStatusError as e:
        status = e.status_code
    sent = stub.requests[-1]["body"]
print(f"expected tools kept with tool_choice {{'type': 'none'}}; provider received tools={sent.get('tools')!r}, "
      f"tool_choice={sent.get('tool_choice')!r}; client status {status}")
sys.exit(verdict("tools" not in sent, "tool_choice none drops the tools a tool history needs"))
