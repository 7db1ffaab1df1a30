"""gateway-conformance: executable rules from OpenAI-compatible gateways' docs, and the harness that runs them."""

from __future__ import annotations

__version__ = "0.1.0"
