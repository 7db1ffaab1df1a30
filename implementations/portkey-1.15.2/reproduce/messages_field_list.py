"""/v1/messages is rebuilt from a fixed field list (model, messages, max_tokens, container, mcp_servers, metadata,
service_tier, stop_sequences, stream, system, temperature, thinking, tool_choice, tools, top_k, top_p): a top-level
cache_control, output_config (structured outputs' format, effort), context_management, the beta output_format and
any newer field are dropped without a word (200). Block-level cache_control does reach Anthropic.

Rule: anthropic/caching/top-level-breakpoint (MUST, FAIL); the rest is under `pass-through`, not claimed by Portkey
(peer-claims-checked P3/M1: a whitelist, not a cache bug).
"""
from stub import Stub, gateway, http, verdict

DROPPABLE = {"cache_control": {"type": "ephemeral", "ttl": "5m"},
             "output_config": {"effort": "low", "format": {"type": "json_schema", "schema": {"type": "object"}}},
             "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
             "output_format": {"type": "json_schema", "schema": {"type": "object"}}, "x_future_field": 1}
REQ = dict({"model": "claude-sonnet-4-5-20250929", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}],
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]}, **DROPPABLE)
stub = Stub()
with gateway(stub) as gw:
    st, _, _ = http("POST", gw + "/v1/messages", REQ, {"anthropic-version": "2023-06-01",
                    "anthropic-beta": "context-management-2025-06-27"})
up = stub.posts("/v1/messages")[0]["body"]
lost = [k for k in DROPPABLE if k not in up]
print("request: POST /v1/messages with top-level", sorted(DROPPABLE), "and a system block with cache_control")
print("provider received keys:", sorted(up), "; system[0].cache_control =", up["system"][0].get("cache_control"))
print("client got:", st, "; dropped:", lost)
verdict(bool(lost), f"top-level fields dropped: {lost}")
