"""Bridged /v1/responses: a previous_response_id that LiteLLM cannot resolve is answered 200 without the
conversation (the provider gets only the new turn). Without a database that is every id, its own included.

Rule: responses/state/previous-id-refused-when-not-kept (MUST, FAIL); the BerriAI/litellm#26167 class.
Gateway's: session_handler.py turns an id without spend logs into an empty history and goes on, so a deployment
with a database would answer an unknown id the same way (not run here: no Postgres). OpenAI answers 404
previous_response_not_found.
"""
from stub import Stub, gateway, http, short, verdict

stub = Stub()
def turns(call):
    return [(m["role"], " ".join(c.get("text", "") for c in m["content"]) if isinstance(m["content"], list)
             else m["content"]) for m in call["body"]["messages"]]
with gateway(stub) as gw:
    st1, _, b1 = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": "Remember the word TULIP.",
                                                      "max_output_tokens": 32})
    import json; own = json.loads(b1)["id"]
    st2, _, _ = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": "Which word?",
                                                     "previous_response_id": own, "max_output_tokens": 32})
    st3, _, b3 = http("POST", gw + "/v1/responses", {"model": "claude-test", "input": "Which word?",
                      "previous_response_id": "resp_gc_unknown_0001", "max_output_tokens": 32})
    st4, _, b4 = http("GET", gw + "/v1/responses/" + own)
ups = stub.posts("/v1/messages")
print("request 1: 'Remember the word TULIP.' ->", st1, "id", short(own, 40))
print("request 2: 'Which word?' previous_response_id=<its own id> ->", st2, "; provider received", turns(ups[1]))
print("request 3: 'Which word?' previous_response_id=resp_gc_unknown_0001 ->", st3,
      "; provider received", turns(ups[2]) if len(ups) > 2 else "nothing")
print("GET /v1/responses/<its own id> ->", st4, short(b4, 120))
verdict(st3 == 200, "an unknown previous_response_id is answered 200 without the conversation")
