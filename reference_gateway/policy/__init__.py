"""The gateway's policy as data (pure).

vocabulary.py  what can happen to each request field, how a request is read, usage shapes, stream-error styles
profiles.py    each documented gateway (EZAT, LYRouter, Relay) in that vocabulary
models.py      the model catalog: ids, channels, capabilities, the workspace's default model
channels.py    routing: a requested model to its catalog entry and channels, or the profile's error
"""
