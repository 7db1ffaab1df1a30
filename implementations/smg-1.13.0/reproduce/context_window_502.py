"""On /v1/messages (not streamed) an Anthropic answer with stop_reason "model_context_window_exceeded" (a documented
stop reason of the Messages API) becomes a 502 "Invalid response from backend": smg parses the provider's answer
into its typed Message, whose StopReason enum lacks that value, and the parse fails. anthropic-python retries the
502 twice (three billed provider calls), then raises InternalServerError; the text the model wrote is lost.

Rule: anthropic/stop/context-window (MUST) fails it, but needs the pass-through feature, not claimed in the stored
run (catalog gap: no core rule). Streamed answers pass it through unchanged.
"""
import anthropic
from stub import ANT_KEY, Stub, anthropic_message, gateway, verdict

stub = Stub(lambda m, p, b: (200, {}, anthropic_message("model_context_window_exceeded", "Partial answer"))
            if p == "/v1/messages" else None)
with gateway(stub, "anthropic") as gw:
    try:
        r = anthropic.Anthropic(base_url=gw, api_key=ANT_KEY).messages.create(
            model="claude-sonnet-4-5-20250929", max_tokens=16, messages=[{"role": "user", "content": "long"}])
        got = f"200 stop_reason={r.stop_reason}"
    except anthropic.APIStatusError as e:
        got = f"{e.status_code} {type(e).__name__}: {e.message[:90]}"
print("request: messages.create; the provider answers 200 with stop_reason model_context_window_exceeded")
print(f"  expected 200 with that stop_reason, got {got}; provider calls: {len(stub.posts('/v1/messages'))}")
verdict(not got.startswith("200"), "a valid Anthropic answer becomes a 502")
