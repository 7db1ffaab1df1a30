"""/v1/chat/completions to an Anthropic model without max_tokens: Portkey sends Anthropic no max_tokens (which
Anthropic requires), so every such request is refused by the provider. With max_tokens the same call works.

Rules: the root cause of 170 of 176 failing `openai` variants (openai/errors/before-stream-is-status and 115 more)
and 314 of 337 on `ezat`. Gateway's: its anthropic chat-complete config has max_tokens required with no default.
"""
import openai
from stub import KEY, Stub, gateway, short, verdict

stub = Stub()
with gateway(stub) as gw:
    c = openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0)
    try:
        c.chat.completions.create(model="claude-sonnet-4-5-20250929", messages=[{"role": "user", "content": "hi"}])
        without = "200"
    except openai.APIStatusError as e:
        without = f"{type(e).__name__} {e.status_code} {short(e.message, 160)}"
    r = c.chat.completions.create(model="claude-sonnet-4-5-20250929", max_tokens=64,
                                  messages=[{"role": "user", "content": "hi"}])
ups = stub.posts("/v1/messages")
print("request: openai-python chat.completions.create(model=claude-sonnet-4-5-20250929, messages=[...]) (no max_tokens)")
print("provider received: max_tokens =", ups[0]["body"].get("max_tokens", "<absent>"), "; keys", sorted(ups[0]["body"]))
print("client got:", without)
print("same call with max_tokens=64: provider received max_tokens =", ups[1]["body"].get("max_tokens"),
      "; client got", repr(r.choices[0].message.content))
verdict("max_tokens" not in ups[0]["body"], "no max_tokens sent to Anthropic when the client omits it")
