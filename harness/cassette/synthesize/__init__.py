"""The synthesized cassettes, generated: each built from its provider's documented wire format (docs/wire-reference.md)
with deterministic ids and written through the cassette module, so regenerating gives the shipped files byte for
byte (`python -m harness.cassette.synthesize [--check] [--cassettes-dir DIR]`; tests/harness/cassette/ checks it).

    common.py      deterministic ids; what a generated cassette is
    anthropic.py   the Anthropic Messages wire: ids, requests, messages, SSE events, interactions
    anthropic_catalogue.py  the Anthropic cassettes (cassettes/anthropic/) built with it
    lyrouter.py    the cassettes only the lyrouter catalog uses (its fallbacks, its doc's 200 example)
    openai.py      OpenAI-compatible answers (cassettes/openai/)
    gemini.py      Gemini generateContent answers (cassettes/gemini/)
    mixed.py       fallback chains across families (cassettes/mixed/), built with the three above
    features.py    what a gateway adds: each provider's 429 with its rate-limit headers, usage with both cache tiers
    codex.py       Codex's round trips in every family: a call of its freeform apply_patch, a tool turn's reasoning
    clients.py     the client scenarios' provider scripts (cassettes/clients/anthropic/)
    scenarios.py   each cassette's scenario block: the properties it exists for, the request that provokes them
    build.py       every cassette built, written or compared
"""
