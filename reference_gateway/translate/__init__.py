"""The pure core: requests, answers and streams translated between the gateway's inbound API and each provider
family. No I/O, no globals, no clock; the profile's policy is an argument; inputs are never changed.

    chunks.py      the chunk stream the gateway sends, shared by every family's stream translator
    completion.py  the completion the gateway answers with: usage, finish reasons, the one-choice answer
    content.py     OpenAI content parts read (text, images, files), for the families that need them apart
    anthropic/     Chat Completions ⇄ Anthropic Messages: request, response, stream
    openai/        OpenAI-compatible channels: the body passed on, the stream relayed
    gemini/        Chat Completions ⇄ Gemini generateContent: request, response, stream
    relay.py       Relay's own additions: image checks, server tools, web-search reports, cost
"""
