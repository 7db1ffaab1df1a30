"""On /v1/messages a cache_control {"type": "ephemeral", "ttl": "1h"} reaches Anthropic as {"type": "ephemeral"}: smg's
CacheControl enum has the one unit variant Ephemeral (protocols messages.rs), so the ttl is lost on re-serialisation
and the 1-hour cache silently becomes Anthropic's default 5 minutes (cache writes the client pays again).

Rule: anthropic/caching/ttl-kept (MUST, FAIL).
"""
import anthropic
from stub import ANT_KEY, Stub, gateway, verdict

stub = Stub()
with gateway(stub, "anthropic") as gw:
    anthropic.Anthropic(base_url=gw, api_key=ANT_KEY, max_retries=0).messages.create(
        model="claude-sonnet-4-5-20250929", max_tokens=16,
        system=[{"type": "text", "text": "You are terse. " * 200, "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi",
                                                "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}])
body = stub.posts("/v1/messages")[-1]["body"]
got = [body["system"][0].get("cache_control"), body["messages"][0]["content"][0].get("cache_control")]
print("request: messages.create with cache_control {type: ephemeral, ttl: 1h} on a system block and a user block")
print("  expected the provider to receive ttl 1h on both, got:", got)
verdict(any((cc or {}).get("ttl") != "1h" for cc in got), "cache_control.ttl is dropped")
