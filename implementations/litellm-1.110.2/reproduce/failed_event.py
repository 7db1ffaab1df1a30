"""After a mid-stream provider error, /v1/responses ends with `response.failed` whose response lacks
`parallel_tool_calls`, `tool_choice` and `tools` and has `output: []` though text was streamed. The error itself
is reported (status failed, error.code, message); openai-python's raw iterator reads it (fields read None).

Rules: responses/errors/mid-stream-error-event, responses/errors/failed-carries-error (MUST, FAIL on the schema
check, as stored; both set-ups: bridged claude-test and native gpt-test). The catalog being edited in the working
tree moves this to responses/errors/failed-response-typed (SHOULD), where `output` may be empty; so the verdict
below is on the missing typed fields only, and `output: []` is printed for information.
"""
import openai
from stub import KEY, Stub, anthropic_sse, gateway, http, responses_sse, sse_events, verdict

LINES = {"type": "text", "text": "", "parts": ["Line 1\n", "Line 2\n", "Line 3\n"]}
def handler(m, p, b):
    if p == "/v1/messages": return 200, {}, anthropic_sse([LINES], error_after=2)
    if p == "/v1/responses": return 200, {}, responses_sse("resp_stub_err", ["Line 1\n", "Line 2\n", "Line 3\n"], error_after=2)
stub = Stub(handler)
seen = {}
with gateway(stub) as gw:
    for model in ("claude-test", "gpt-test"):
        _, _, body = http("POST", gw + "/v1/responses", {"model": model, "input": "Write three lines.", "stream": True})
        ev = sse_events(body)
        failed = [d["response"] for e, d in ev if e == "response.failed"]
        deltas = sum(e == "response.output_text.delta" for e, _ in ev)
        seen[model] = (deltas, failed[0] if failed else None, [e for e, _ in ev][-1])
    last = list(openai.OpenAI(base_url=gw + "/v1", api_key=KEY, max_retries=0).responses.create(
        model="claude-test", input="Write three lines.", stream=True))[-1]
print("request: POST /v1/responses stream=true; the provider sends 2 text deltas then its error event")
present = False
for model, (deltas, f, lastev) in seen.items():
    miss = [k for k in ("parallel_tool_calls", "tool_choice", "tools") if f is not None and k not in f]
    print(f"client got ({model}): {deltas} text deltas, last event {lastev}; response.failed error={f and f.get('error')}, "
          f"output={f and f.get('output')}, missing={miss}")
    present |= bool(miss)
print(f"openai-python raw iterator: last event {type(last).__name__}, status={last.response.status}, "
      f"parallel_tool_calls={last.response.parallel_tool_calls}, output={last.response.output}")
verdict(present, "response.failed lacks parallel_tool_calls / tool_choice / tools")
