"""Bridged /v1/responses: a reasoning input item LiteLLM did not issue (an encrypted_content it cannot decode)
is dropped without a word; its OWN reasoning items do go back to Anthropic as signed thinking blocks.

Rule: responses/request/reasoning-item-not-dropped (SHOULD, WARN); BerriAI/litellm#36197. Corrected form
(peer-claims-checked L4): only foreign items are dropped, the own round trip works (shown below).
"""
import json
from stub import Stub, anthropic_message, gateway, http, verdict

THINK = {"type": "thinking", "thinking": "The word is TULIP.", "signature": "SIG-stub-0001"}
stub = Stub(lambda m, p, b: (200, {}, anthropic_message([THINK, {"type": "text", "text": "I will remember TULIP."}]))
            if p == "/v1/messages" and "thinking" in b else None)
def assistant_blocks(call):
    return [[c["type"] for c in m["content"]] for m in call["body"]["messages"] if m["role"] == "assistant"]
with gateway(stub) as gw:
    foreign = [{"role": "user", "content": "Remember the word TULIP."},
               {"type": "reasoning", "id": "rs_gc_0001", "summary": [], "encrypted_content": "gc-opaque-reasoning-0001"},
               {"role": "assistant", "content": "I will remember TULIP."}, {"role": "user", "content": "Which word?"}]
    st1, _, _ = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": foreign, "max_output_tokens": 32})
    first = stub.posts("/v1/messages")[:1]  # [] when refused before any call (a 400 naming the item: not present)
    st2, _, b2 = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": "Remember the word TULIP.",
                      "reasoning": {"effort": "low"}})
    own = [{"role": "user", "content": "Remember the word TULIP."}] + json.loads(b2)["output"] + \
          [{"role": "user", "content": "Which word?"}]
    n = len(stub.posts("/v1/messages"))
    st3, _, _ = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": own, "max_output_tokens": 32})
    third = stub.posts("/v1/messages")[n]
print("request 1: input with a foreign reasoning item (encrypted_content 'gc-opaque-reasoning-0001') ->", st1)
print("  provider received assistant blocks:", assistant_blocks(first[0]) if first else "nothing (refused)")
print("request 2 (effort low) ->", st2, "; request 3 sends its output items back ->", st3)
print("  provider received assistant blocks:", assistant_blocks(third), "signatures",
      [c.get("signature") for m in third["body"]["messages"] for c in m["content"] if c.get("type") == "thinking"])
verdict(st1 == 200 and bool(first) and "thinking" not in sum(assistant_blocks(first[0]), []),
        "a foreign reasoning item is dropped without a word")
