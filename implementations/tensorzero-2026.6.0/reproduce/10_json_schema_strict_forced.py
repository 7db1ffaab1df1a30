"""(catalog gap: no rule fails it) A json_schema response_format reaches OpenAI as {"name": "response", "strict": true,
"schema": ...} whatever the client sent: the client's name is replaced and `strict: false` becomes true. OpenAI's
strict mode requires every property in `required` and `additionalProperties: false`, so a schema written for
non-strict mode (an optional property) is refused by OpenAI through the gateway, though OpenAI accepts it as sent.
Source: crates/tensorzero-core/src/endpoints/openai_compatible/types/chat_completions.rs (json_schema -> JsonMode::Strict,
the `strict` flag unread); providers/openai/mod.rs (`json!({"name": "response", "strict": true, "schema": schema})`).
    python3 10_json_schema_strict_forced.py"""
import sys

import openai
from tzstub import OPENAI, Reply, gateway, openai_completion, verdict

FORMAT = {"type": "json_schema", "json_schema": {"name": "weather", "strict": False, "schema": {
    "type": "object", "properties": {"city": {"type": "string"}, "note": {"type": "string"}}, "required": ["city"]}}}
with gateway(lambda path, body: Reply(body=openai_completion('{"city": "Oslo"}'))) as (url, stub):
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    client.chat.completions.create(model=OPENAI, response_format=FORMAT,
                                   messages=[{"role": "user", "content": "Weather in Oslo as JSON."}])
    sent = stub.requests[-1]["body"]["response_format"]["json_schema"]
print(f"client sent name 'weather', strict False; provider received name {sent.get('name')!r}, strict {sent.get('strict')!r}")
sys.exit(verdict(sent.get("strict") is not False or sent.get("name") != "weather",
                 "json_schema name replaced and strict forced to true"))
