"""The one retry and fallback loop: candidates (a model's channels, or a model and its fallback chain) tried in
order, each up to `tries` times, while the failures are retryable; the last failure is the client's.

LYRouter "Channel selection and fallback": the next channel only after a failure marked `retryable` at the
upstream boundary (before any byte reached the client). Relay: "transient retry" of one model, then "fallback
along the model's fallback chain".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from reference_gateway import errors
from reference_gateway.errors import GatewayError

C = TypeVar("C")
R = TypeVar("R")


async def first_success(
    candidates: Sequence[C], attempt: Callable[[C], Awaitable[R]], *, tries: int = 1
) -> R:
    failure: GatewayError | None = None
    for candidate in candidates:
        for _ in range(tries):
            try:
                return await attempt(candidate)
            except GatewayError as error:
                if not error.retryable:
                    raise
                failure = error
    raise failure or errors.server_error()
