"""The simulator's count_tokens (harness/simulator/app.py): the request's own input counted, system and tools
included, and a body without messages refused as Anthropic refuses it."""

from __future__ import annotations

import httpx

from harness.simulator.app import SimulatorServer


def test_the_count_grows_with_the_system_prompt_and_tools() -> None:
    with SimulatorServer(seed=1) as sim:
        url = sim.url + "/v1/messages/count_tokens"
        plain = {"model": "claude-sonnet-5-5", "messages": [{"role": "user", "content": "Count my tokens."}]}
        more = {
            **plain,
            "system": "You are terse and precise, always.",
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        }
        small = httpx.post(url, json=plain).json()["input_tokens"]
        large = httpx.post(url, json=more).json()["input_tokens"]
        assert isinstance(small, int) and 0 < small < large
        refused = httpx.post(url, json={"model": "claude-sonnet-5-5"})
        assert refused.status_code == 400 and refused.json()["type"] == "error"
