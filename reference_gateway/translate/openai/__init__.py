"""OpenAI-compatible channels (pure): `passthrough.py`, the body passed on with the profile's changes and the
provider's stream relayed chunk by chunk."""
