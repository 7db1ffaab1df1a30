"""Reference gateway: OpenAI Chat Completions served from Anthropic's Messages API.

Layout: `translate/` is the pure core, `profiles.py` the per-gateway policy as data, `upstream.py` the only
module that talks to the provider, `app.py` the thin Starlette app, `cli.py` the command line.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
