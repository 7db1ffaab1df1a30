"""What the clients command borrows from the orchestration: the embedded reference gateway and the replay
upstream, started exactly as certify starts them. One place, so a regrouping of harness/orchestrate (issue
19: orchestrate/embedded.py and orchestrate/child.py) changes only these imports."""

from __future__ import annotations

try:  # the regrouped layout
    from harness.orchestrate.child import (  # type: ignore[import-not-found,unused-ignore]
        fresh_output,
        replay_for_target,
        replay_upstream,
    )
    from harness.orchestrate.embedded import reference_gateway  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # the flat harness/orchestrate.py
    from harness.orchestrate import (  # type: ignore[no-redef,attr-defined,unused-ignore]
        fresh_output,
        reference_gateway,
        replay_for_target,
        replay_upstream,
    )

__all__ = ["fresh_output", "reference_gateway", "replay_for_target", "replay_upstream"]
