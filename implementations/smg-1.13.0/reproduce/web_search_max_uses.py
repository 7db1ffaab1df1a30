"""On /v1/messages an Anthropic server tool loses its options: {"type": "web_search_20250305", "name": "web_search",
"max_uses": 3, "allowed_domains": [...]} reaches Anthropic as {"type": ..., "name": ...}. smg's Tool enum is
#[serde(untagged)] and tries ToolSearchTool (type + name) before WebSearchTool, so the web search runs unbounded
and on any domain (billed per search).

Rule: anthropic/forward/server-tool (MUST) fails it, but needs the pass-through feature, not claimed in the stored
run (catalog gap).
"""
import anthropic
from stub import ANT_KEY, Stub, gateway, verdict

TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["example.com"]}
stub = Stub()
with gateway(stub, "anthropic") as gw:
    anthropic.Anthropic(base_url=gw, api_key=ANT_KEY, max_retries=0).messages.create(
        model="claude-sonnet-4-5-20250929", max_tokens=16, tools=[TOOL],
        messages=[{"role": "user", "content": "Search the news."}])
got = stub.posts("/v1/messages")[-1]["body"]["tools"][0]
print("request: messages.create with tools =", [TOOL])
print("  expected the provider to receive it unchanged, got:", got)
verdict(got != TOOL, "server tool options are dropped")
