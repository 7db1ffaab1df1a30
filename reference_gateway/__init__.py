"""Reference gateway: OpenAI Chat Completions served from Anthropic Messages, OpenAI-compatible and Gemini
channels, one profile per documented gateway.

Layout, top down: `cli.py` the command line; `app.py` wires routes, layers (`middleware.py`) and the lifespan
(`services.py`); `flows/` the chat and relay flows and their one retry/fallback loop; `adapters/` one adapter
per provider family; `intake.py`, `streaming.py`, `responses.py`, `logs.py` the HTTP plumbing; `upstream.py`
the only module that talks to providers; `translate/` the pure core; `policy.py` and `profiles.py` the
per-gateway policy as data.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
