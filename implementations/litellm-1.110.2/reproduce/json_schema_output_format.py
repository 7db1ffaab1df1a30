"""A json_schema response format reaches Anthropic as the beta `output_format` (+ anthropic-beta:
structured-outputs-2025-11-13), not as the GA `output_config.format`; the schema itself is intact.

Rules: openai/output/json-schema-reaches-provider, responses/output/json-schema-reaches-provider (MUST, FAIL).
Fairness (peer-claims-checked L7): while Anthropic still accepts the beta form this works for users.
"""
from stub import Stub, gateway, http, short, verdict

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
          "additionalProperties": False}
stub = Stub()
with gateway(stub) as gw:
    s1, _, b1 = http("POST", gw + "/v1/chat/completions", {"model": "claude-test", "max_tokens": 64,
                     "messages": [{"role": "user", "content": "Answer in JSON."}],
                     "response_format": {"type": "json_schema", "json_schema": {"name": "a", "strict": True,
                                                                                "schema": SCHEMA}}})
    s2, _, b2 = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": "Answer in JSON.",
                     "max_output_tokens": 64, "text": {"format": {"type": "json_schema", "name": "a",
                                                                  "strict": True, "schema": SCHEMA}}})
present = False
for name, call, st in (("/v1/chat/completions", stub.calls[0] if stub.calls else None, s1),
                       ("/v1/responses", stub.calls[1] if len(stub.calls) > 1 else None, s2)):
    body = call["body"] if call else {}
    fmt = (body.get("output_config") or {}).get("format")
    print(f"request: {name} with a json_schema format (client got {st})")
    print("  provider received: output_config.format =", short(fmt, 150), "| output_format =",
          short(body.get("output_format"), 150), "| anthropic-beta =", call and call["headers"].get("anthropic-beta"))
    present |= fmt is None and body.get("output_format") is not None
verdict(present, "the schema goes as the beta output_format, not output_config.format")
