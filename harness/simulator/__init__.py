"""The provider simulator: a generative fake provider that answers from the request alone, like a real model,
in every provider family (`serve-upstream --simulate`; live mode and `record` rehearsed offline).

    core.py     the family-independent model: text of varying length, tools from their schemas, thinking,
                prompt-cache prefixes, stop sequences, refusals of what the APIs refuse
    wire.py     Anthropic Messages and OpenAI Chat Completions wire formats (answers and streams)
    gemini.py   Gemini generateContent / streamGenerateContent
    app.py      the ASGI app and its loopback server
"""
