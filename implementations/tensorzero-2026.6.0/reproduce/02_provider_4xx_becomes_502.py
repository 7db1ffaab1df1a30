"""A provider's 400 (context_length_exceeded) and 429 (with Retry-After) reach the client as 502: openai-python raises
InternalServerError instead of BadRequestError/RateLimitError, and, 502 being retryable, repeats a request the
provider already refused (3 upstream calls with the SDK's default max_retries=2). Rules: openai/errors/
provider-400-stays-4xx, context-window-400, provider-429-stays-429, retryable-stays-retryable (and the WARNs
context-length-code, retry-after-kept, request-id-on-errors, whose 400/429 precondition fails).
Source: crates/tensorzero-error/src/lib.rs ErrorDetails::status_code (AllVariantsFailed -> BAD_GATEWAY unless the
gateway's own rate limit; rate_limit_status_code: "provider-reported statuses ... do not leak through the wrappers").
    python3 02_provider_4xx_becomes_502.py"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, verdict

TOO_LONG = {"error": {"message": "This model's maximum context length is 400000 tokens.", "type": "invalid_request_error",
                      "param": "messages", "code": "context_length_exceeded"}}
RATE = {"error": {"message": "Rate limit reached", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}


def answer(path, body):
    text = body["messages"][0]["content"]
    return Reply(429, RATE, headers={"retry-after": "7"}) if "429" in text else Reply(400, TOO_LONG)


present = False
with gateway(answer) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused")  # default max_retries=2, as a client has it
    for case, expected in (("400", openai.BadRequestError), ("429", openai.RateLimitError)):
        before = len(stub.requests)
        try:
            client.chat.completions.create(model=OPENAI, messages=[{"role": "user", "content": f"case {case}"}])
        except openai.APIStatusError as e:
            got, status, retry_after = type(e).__name__, e.status_code, e.response.headers.get("retry-after")
        calls = len(stub.requests) - before
        wrong = got != expected.__name__
        present |= wrong
        print(f"provider {case}: expected {expected.__name__} ({case}), got {got} ({status}); "
              f"Retry-After to client: {retry_after!r}; upstream calls for one create(): {calls}")
sys.exit(verdict(present, "provider 4xx answered as 502 (a retryable server error)"))
