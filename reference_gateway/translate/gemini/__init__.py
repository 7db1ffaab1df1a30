"""Chat Completions ⇄ Gemini generateContent (pure): `request.py`, `response.py`, `stream.py`."""
