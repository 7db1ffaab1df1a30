"""/v1/messages: provider errors come back in OpenAI's envelope ({"error": {message: "anthropic error: ...", type,
param, code}, "provider": "anthropic"}: no top-level type "error", no request_id). Status, error.type and the
request-id / retry-after headers are kept, so anthropic-python still raises the right class with e.type set.

Rules: anthropic/errors/provider-400, provider-429, provider-500, unknown-model-404, missing-messages-400,
envelope-schema (MUST, FAIL). Corrected impact (peer-claims-checked P1): a conformance defect, not a client-breaking one.
"""
import anthropic
from stub import KEY, Stub, anthropic_error, gateway, http, short, verdict

CASES = {"s400": (400, "invalid_request_error"), "s404": (404, "not_found_error"),
         "s429": (429, "rate_limit_error"), "s500": (500, "api_error"), "s529": (529, "overloaded_error")}
def handler(m, p, b):
    for k, (st, t) in CASES.items():
        if p == "/v1/messages" and k in str(b):
            return anthropic_error(st, t, f"{t} from the stub", {"retry-after": "7"} if st == 429 else {})
stub = Stub(handler)
rows, raw = [], None
with gateway(stub) as gw:
    raw = http("POST", gw + "/v1/messages", {"model": "claude-sonnet-4-5-20250929", "max_tokens": 16,
               "messages": [{"role": "user", "content": "s429"}]}, {"anthropic-version": "2023-06-01"})
    c = anthropic.Anthropic(base_url=gw, api_key=KEY, max_retries=0)
    for k, (st, t) in CASES.items():
        try:
            c.messages.create(model="claude-sonnet-4-5-20250929", max_tokens=16, messages=[{"role": "user", "content": k}])
            rows.append(f"{st} {t}: no exception")
        except anthropic.APIStatusError as e:
            rows.append(f"{st} {t}: {type(e).__name__} status={e.status_code} e.type={getattr(e, 'type', '?')} "
                        f"request_id={e.request_id}")
st, h, body = raw
h = {k.lower(): v for k, v in h.items()}
print("request: POST /v1/messages; the provider answers 429 {type: error, error: {type: rate_limit_error, ...}, request_id}")
print(f"client got: {st} retry-after={h.get('retry-after')} request-id={h.get('request-id')} body {short(body, 220)}")
print("anthropic-python, provider status -> exception raised:")
for r in rows: print("  ", r)
verdict('"type":"error"' not in body.replace(" ", ""), "errors in OpenAI's envelope, not Anthropic's")
