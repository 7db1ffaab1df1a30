"""The gateway's own limits on a client key, enforced at intake (before anything is routed or billed): a sliding
window of the key's requests in the last minute, and a spent budget (reference_gateway/policy/keys.py says what a
key's policy is and each profile's words for the refusal). In memory, per worker process."""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime, timezone

from reference_gateway.errors import GatewayError
from reference_gateway.policy.keys import KeyLimits, KeyPolicy

WINDOW = 60.0  # seconds: a rate limit is requests a minute


class KeyLimiter:
    def __init__(self, policies: Mapping[str, KeyPolicy], clock: Callable[[], float] = time.time) -> None:
        self._policies = policies
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def refusal(self, key: str | None, limits: KeyLimits) -> GatewayError | None:
        """The profile's refusal of this request, or None when the key may go on (its request then counts)."""
        policy = self._policies.get(key) if key is not None else None
        if policy is None:
            return None
        if policy.over_budget:
            return limits.over_budget_error()
        if policy.requests_per_minute is None:
            return None
        now = self._clock()
        with self._lock:
            seen = self._seen.setdefault(key or "", deque())
            while seen and seen[0] <= now - WINDOW:
                seen.popleft()
            if len(seen) < policy.requests_per_minute:
                seen.append(now)
                return None
            # The wait until a request of the window leaves it (a whole window when the limit is 0).
            free = seen[0] + WINDOW if seen else now + WINDOW
        wait = max(1, math.ceil(free - now))
        reset = datetime.fromtimestamp(free, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return limits.rate_limit_error(policy.requests_per_minute, wait, reset)
