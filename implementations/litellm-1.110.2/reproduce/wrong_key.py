"""A wrong key is answered 400 no_db_connection, not 401 (set-up: master key, no database).

Rules: openai/errors/wrong-key-401, anthropic/errors/wrong-key-401, responses/errors/wrong-key-401.
With a database (DATABASE_URL) LiteLLM looks the key up and answers 401; this set-up has none.
"""
import openai
from stub import Stub, gateway, http, short, verdict

stub = Stub()
with gateway(stub) as gw:
    bad = {"authorization": "Bearer sk-wrong-key"}
    s1, _, b1 = http("POST", gw + "/v1/chat/completions", {"model": "claude-test", "max_tokens": 16,
                     "messages": [{"role": "user", "content": "hi"}]}, bad)
    s2, _, b2 = http("POST", gw + "/v1/messages", {"model": "claude-test", "max_tokens": 16,
                     "messages": [{"role": "user", "content": "hi"}]},
                     {"authorization": None, "x-api-key": "sk-wrong-key", "anthropic-version": "2023-06-01"})
    s3, _, b3 = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": "hi"}, bad)
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key="sk-wrong-key", max_retries=0).chat.completions.create(
            model="claude-test", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
        sdk = "no exception"
    except openai.APIStatusError as e:
        sdk = type(e).__name__
print("request: POST /v1/chat/completions, /v1/messages, /v1/responses with the key sk-wrong-key")
print("provider received:", len(stub.calls), "calls")
print("client got: chat", s1, short(b1, 160)); print("            messages", s2, short(b2, 160))
print("            responses", s3, short(b3, 160))
print("openai-python chat.completions.create raised:", sdk, "(expected AuthenticationError)")
verdict(401 not in (s1, s2, s3), f"wrong key -> {s1}/{s2}/{s3}, expected 401")
