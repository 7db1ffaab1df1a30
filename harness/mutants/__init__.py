"""Mutant gateways: one plausible bug each, applied by a mutating proxy, and the kill matrix they produce."""

from __future__ import annotations

from harness.mutants.cli import main

__all__ = ["main"]
