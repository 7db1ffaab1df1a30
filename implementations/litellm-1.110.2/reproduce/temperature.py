"""temperature 1.5 (valid for OpenAI: 0..2) reaches Anthropic unchanged, outside Anthropic's [0, 1]; Anthropic
refuses it (the stub validates like Anthropic), so the client gets a 400 with the provider's reason.

Rules: openai/request/temperature-in-range, responses/request/temperature-in-range (MUST, FAIL).
"""
import re
import openai
from stub import KEY, Stub, gateway, short, verdict

stub = Stub()
with gateway(stub) as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    got = []
    for name, call in (("chat.completions.create", lambda: c.chat.completions.create(model="claude-test",
                        max_tokens=32, temperature=1.5, messages=[{"role": "user", "content": "hi"}])),
                       ("responses.create", lambda: c.responses.create(model="claude-test", input="hi",
                        max_output_tokens=32, temperature=1.5))):
        try: call(); got.append(f"{name}: 200")
        except openai.APIStatusError as e: got.append(f"{name}: {type(e).__name__} {e.status_code} "
                                                   + str(re.findall(r"temperature: [^\"\\\\]*", e.message)))
sent = [c["body"].get("temperature") for c in stub.posts("/v1/messages")]
print("request: temperature=1.5 via openai-python chat.completions.create and responses.create (model claude-test)")
print("provider received: temperature =", sent)
for g in got: print("client got:", g)
verdict(any(t is not None and t > 1 for t in sent), "temperature above Anthropic's maximum 1 sent unchanged")
