"""What the clients command borrows from the orchestration: the embedded reference gateway and the replay
upstream, started exactly as certify starts them (harness/orchestrate/embedded.py and child.py)."""

from __future__ import annotations

from harness.orchestrate.child import fresh_output, replay_for_target, replay_upstream
from harness.orchestrate.embedded import reference_gateway

__all__ = ["fresh_output", "reference_gateway", "replay_for_target", "replay_upstream"]
