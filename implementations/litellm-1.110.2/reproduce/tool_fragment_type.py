"""Every streamed tool-call fragment repeats `type: "function"` (OpenAI sends it on the first fragment only).
Harmless to openai-python: its stream accumulator still joins the arguments.

Rule: openai/tools/continuation-type-not-repeated (SHOULD, WARN).
"""
import openai
from stub import KEY, Stub, anthropic_sse, gateway, http, sse_events, verdict

TOOL = {"type": "tool_use", "id": "toolu_stub_1", "name": "get_weather", "parts": ['{"city"', ': "Os', 'lo"}']}
stub = Stub(lambda m, p, b: (200, {}, anthropic_sse([TOOL], "tool_use")) if p == "/v1/messages" else None)
req = {"model": "claude-test", "max_tokens": 64, "stream": True,
       "messages": [{"role": "user", "content": "Weather in Oslo?"}],
       "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
           "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}
with gateway(stub) as gw:
    st, _, body = http("POST", gw + "/v1/chat/completions", req)
    client = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    with client.chat.completions.stream(**{k: v for k, v in req.items() if k != "stream"}) as s:
        final = s.get_final_completion()
frags = [tc for _, d in sse_events(body) if isinstance(d, dict)
         for ch in d.get("choices", []) for tc in (ch.get("delta") or {}).get("tool_calls") or []]
cont = [f for f in frags if not f.get("id")]
print("request: streamed chat completion with one tool; provider streams the call in 3 input_json_delta pieces")
print(f"client got: {len(frags)} tool-call fragments; continuations carrying type: "
      f"{sum('type' in f for f in cont)} of {len(cont)}; e.g. {cont[-1] if cont else None}")
print("openai-python stream helper joined arguments:", final.choices[0].message.tool_calls[0].function.arguments)
verdict(any("type" in f for f in cont), "continuation fragments repeat type")
