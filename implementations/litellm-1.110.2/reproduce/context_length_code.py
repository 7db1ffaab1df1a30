"""A context-window refusal has no `context_length_exceeded` code: the code is the HTTP status as a string ("400").
Bridged (Anthropic "prompt is too long") and native (OpenAI's own code context_length_exceeded, replaced).

Rules: openai/errors/context-length-code, responses/errors/context-length-code (SHOULD, WARN; both set-ups).
"""
import openai
from stub import KEY, Stub, anthropic_error, gateway, openai_error, verdict

def handler(m, p, b):
    if p == "/v1/messages":
        return anthropic_error(400, "invalid_request_error", "prompt is too long: 210431 tokens > 200000 maximum")
    if p == "/v1/responses":
        return openai_error(400, "invalid_request_error", "Your input exceeds the context window of this model.",
                            "context_length_exceeded", "input")
stub = Stub(handler)
codes = {}
with gateway(stub) as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    for name, call in (("chat.completions claude-test (bridged)", lambda: c.chat.completions.create(
                            model="claude-test", max_tokens=16, messages=[{"role": "user", "content": "long"}])),
                       ("responses gpt-test (native)", lambda: c.responses.create(model="gpt-test", input="long"))):
        try: call(); codes[name] = "no error"
        except openai.APIStatusError as e: codes[name] = (e.status_code, type(e).__name__, e.code, e.message[:60])
print("request: the provider refuses for the context window (Anthropic: prompt is too long; OpenAI: code context_length_exceeded)")
for k, v in codes.items(): print(f"client got: {k}: {v}")
verdict(any(v[2] != "context_length_exceeded" for v in codes.values() if isinstance(v, tuple)),
        "error.code is not context_length_exceeded")
