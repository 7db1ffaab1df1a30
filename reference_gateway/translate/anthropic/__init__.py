"""Chat Completions ⇄ Anthropic Messages (pure): `request.py` the request, `response.py` the answer, `stream.py`
the stream's state machine."""
