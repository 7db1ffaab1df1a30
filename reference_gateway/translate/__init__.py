"""Pure translation core: OpenAI request → Anthropic request, Anthropic answer/stream → OpenAI answer/chunks.

No I/O, no clock, no globals: the profile policy, `now` and ids are passed in; inputs are never mutated.
"""
