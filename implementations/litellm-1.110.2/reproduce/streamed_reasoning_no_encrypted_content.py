"""Bridged /v1/responses, streamed: the reasoning item in response.output_item.done has no encrypted_content even
when the client asks for include=["reasoning.encrypted_content"] (store false); only response.completed's output
list has it. A client that keeps the items from output_item.done (Codex does) sends the reasoning back without it,
and LiteLLM then sends Anthropic thinking enabled with an assistant tool_use turn that has no thinking block
(platform.claude.com/docs/build-with-claude/thinking-tool-workflows: "when you return a tool result, the thinking
blocks from the assistant message must come back with it").

No rule fails it (found while checking Codex's reading of reasoning items; not in peer-claims-checked).
Whether the live Anthropic API refuses the resulting request was not checked (the stub does not validate it).
"""
from stub import Stub, anthropic_sse, gateway, http, sse_events, verdict

THINK = {"type": "thinking", "thinking": "I should call the tool.", "signature": "SIG-stub-0001"}
CALL = {"type": "tool_use", "id": "toolu_stub_1", "name": "get_weather", "parts": ['{"city": "Oslo"}']}
stub = Stub(lambda m, p, b: (200, {}, anthropic_sse([THINK, CALL], "tool_use")) if p == "/v1/messages" and b.get("stream") else None)
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
REQ = {"model": "claude-test", "tools": TOOLS, "reasoning": {"effort": "medium"}, "store": False,
       "include": ["reasoning.encrypted_content"]}
with gateway(stub) as gw:
    _, _, body = http("POST", gw + "/v1/responses", dict(REQ, input="Weather in Oslo?", stream=True))
    ev = sse_events(body)
    done = [d["item"] for e, d in ev if e == "response.output_item.done"]
    completed = next(d["response"]["output"] for e, d in ev if e == "response.completed")
    back = [{"role": "user", "content": "Weather in Oslo?"}] + \
           [{k: v for k, v in i.items() if k not in ("status", "id") or i["type"] == "reasoning"} for i in done] + \
           [{"type": "function_call_output", "call_id": "toolu_stub_1", "output": "12 C"}]
    st, _, _ = http("POST", gw + "/v1/responses", dict(REQ, input=back))
up = stub.posts("/v1/messages")[-1]["body"]
r_done = next(i for i in done if i["type"] == "reasoning")
print("request 1: streamed, include=reasoning.encrypted_content, store=false; the provider streams thinking + tool_use")
print("  output_item.done reasoning item keys:", sorted(r_done), "| in response.completed:",
      sorted(next(i for i in completed if i["type"] == "reasoning")))
print("request 2: the output_item.done items sent back + the tool's output ->", st)
print("  provider received thinking =", up.get("thinking"), "; assistant blocks:",
      [[c["type"] for c in m["content"]] for m in up["messages"] if m["role"] == "assistant"])
verdict("encrypted_content" not in r_done, "the streamed reasoning item has no encrypted_content though it was asked for")
