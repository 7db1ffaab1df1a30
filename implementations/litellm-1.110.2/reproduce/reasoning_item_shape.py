"""Bridged /v1/responses: a NON-streamed reasoning output item has no `summary` and carries the thinking as
`content` parts of type `output_text` (OpenAI: summary required; content parts `reasoning_text`). openai-python
reads it (`summary` is None; a serializer warning); a strict schema rejects it.

Rules: responses/request/reasoning-effort-reaches-provider, responses/usage/reasoning-tokens (MUST, FAIL on the
schema check; the effort does reach Anthropic as thinking).
Codex: ResponseItem::Reasoning has `summary: Vec<...>` without a serde default and ReasoningItemContent is only
reasoning_text | text (codex-rs/protocol/src/models.rs), and its SSE reader skips an item it cannot parse
(codex-rs/codex-api/src/sse/responses.rs). But Codex streams and reads items from response.output_item.done, where
LiteLLM's reasoning item DOES carry summary (and no content), so Codex can parse that one; what that streamed item
lacks is encrypted_content, even with include=["reasoning.encrypted_content"] (printed below).
"""
import json, warnings
import openai, pydantic
from openai.types.responses import Response
from stub import KEY, Stub, anthropic_message, anthropic_sse, gateway, http, sse_events, verdict

THINK = {"type": "thinking", "thinking": "1009 has no divisor up to 31.", "signature": "SIG-stub-0001"}
TEXT = {"type": "text", "text": "Yes, 1009 is prime."}
stub = Stub(lambda m, p, b: (200, {}, anthropic_sse([THINK, TEXT]) if b.get("stream") else anthropic_message([THINK, TEXT]))
            if p == "/v1/messages" else None)
req = {"model": "claude-test", "input": "Is 1009 prime?", "reasoning": {"effort": "medium"}}
with gateway(stub) as gw:
    st, _, body = http("POST", gw + "/v1/responses", req)
    _, _, sbody = http("POST", gw + "/v1/responses", dict(req, stream=True, store=False,
                                                          include=["reasoning.encrypted_content"]))
    with warnings.catch_warnings(record=True) as w, openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0) as c:
        warnings.simplefilter("always")
        r = c.responses.create(**req)
        r.to_dict()
item = next(i for i in json.loads(body)["output"] if i["type"] == "reasoning")
done = next(d["item"] for e, d in sse_events(sbody) if e == "response.output_item.done" and d["item"]["type"] == "reasoning")
try: Response.model_validate(json.loads(body)); strict = "valid"
except pydantic.ValidationError as e:
    strict = [f"{'.'.join(map(str, x['loc'][3:]))}: {x['msg']}" for x in e.errors() if x["loc"][2] == "ResponseReasoningItem"]
codex_ok = lambda i: "summary" in i and all(c.get("type") in ("reasoning_text", "text") for c in i.get("content") or [])
print("request: POST /v1/responses reasoning.effort=medium; provider received thinking =",
      stub.posts("/v1/messages")[0]["body"].get("thinking"))
print(f"client got {st}: reasoning item keys {sorted(item)}, content types {[c['type'] for c in item.get('content') or []]}")
print(f"openai-python: item.summary={r.output[0].summary!r}, output_text={r.output_text!r}, {len(w)} warning(s) "
      f"on create+to_dict(); Response.model_validate(raw) on the reasoning item: {strict}")
print("Codex could parse the non-streamed item:", codex_ok(item))
print("streamed (include=reasoning.encrypted_content) output_item.done reasoning item:", json.dumps(done)[:160],
      "| Codex could parse it:", codex_ok(done), "| has encrypted_content:", "encrypted_content" in done)
verdict("summary" not in item or any(c.get("type") == "output_text" for c in item.get("content") or []),
        "the reasoning item lacks summary / carries output_text content")
