"""On /v1/responses a provider error answer (here 400 and 429, streamed or not) reaches the client with
`content-type: text/plain; charset=utf-8` though its body is the provider's JSON error: smg answers
`(status, body_string)` (axum's text/plain). openai-python still parses the body (it tries JSON whatever the type);
a client that reads the content type first (browser fetch wrappers, httpx `.json()` guards, proxies) sees text.

Rule: responses/errors/before-stream-is-status (MUST, FAIL: content-type must be application/json).
"""
import openai
from stub import KEY, Stub, gateway, http, openai_error, verdict

stub = Stub(lambda m, p, b: openai_error(429, "Rate limit reached. Please try again in 2s.", "tokens",
                                         "rate_limit_exceeded") if b.get("model") == "gpt-5.5" else
            openai_error(400, "Unsupported parameter: 'temperature'.", "invalid_request_error", "unsupported_parameter"))
seen = []
with gateway(stub, "openai") as gw:
    for model, stream in (("gpt-5.5", True), ("gpt-5.5", False), ("o3", False)):
        st, h, body = http("POST", gw + "/v1/responses", {"model": model, "input": "hi", "stream": stream})
        seen.append((model, stream, st, h.get("content-type"), body[:80]))
    try:
        openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).responses.create(model="o3", input="hi")
    except openai.APIStatusError as e:
        sdk = f"{type(e).__name__} code={e.code!r}"
print("request: POST /v1/responses; the provider answers a JSON error (content-type application/json)")
for m, s, st, ct, b in seen:
    print(f"  stream={s}: expected {st} application/json, got {st} content-type {ct!r}: {b}")
print("  openai-python:", sdk)
verdict(any(not (ct or "").startswith("application/json") for *_, ct, _ in seen), "error answer is not application/json")
