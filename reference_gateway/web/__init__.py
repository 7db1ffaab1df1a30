"""The HTTP layer, below the flows: everything between an ASGI request and a flow's answer.

intake.py         header limits, the client's key, content type, the body read and parsed within its limit
body.py           the body parsed once, with limits (pure)
middleware.py     the request id and the one error layer
observability.py  Relay's observability headers
responses.py      JSON, error envelopes, SSE responses that stop when the client goes away
streaming.py      the one SSE loop, with `: ping` while the provider is quiet
endpoints.py      /models, /api/models, /healthz
logs.py           the log filter and line
"""
