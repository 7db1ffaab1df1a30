"""Mutant gateways: one plausible bug each, applied by a mutating proxy, and the kill matrix they produce
(`gateway-conformance mutants`: harness/mutants/command.py; its arguments harness/cli/mutants.py)."""
