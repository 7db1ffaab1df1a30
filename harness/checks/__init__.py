"""Pure checks: one function per check kind, named like the rule keyword that invokes it.

`check_<kind>(expected, exchange)` yields every `Violation` it finds (the way jsonschema keywords
yield errors); `run_checks` runs the kinds a rule's `expect` names. No I/O, no clock, no globals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.checks.violation import Check, Violation
from harness.exchange import Exchange

CHECKS: dict[str, Check] = {}


def run_checks(expect: Mapping[str, Any], exchange: Exchange) -> list[Violation]:
    """Run every check kind named in `expect`; unknown kinds are a programming error (the schema forbids them)."""
    violations: list[Violation] = []
    for kind, expected in expect.items():
        violations.extend(CHECKS[kind](expected, exchange))
    if "provider_accepts" not in expect:  # implicit: what the gateway sent, the provider must accept
        violations.extend(CHECKS["provider_accepts"](True, exchange))
    if _shape.implicit(expect):  # implicit, replay and live alike: a served chat answer has the SDK's shape
        violations.extend(CHECKS["shape"](True, exchange))
    return violations


# Registration: the check modules, each importing `Violation` from harness.checks.violation.
from harness.checks import listener as _listener  # noqa: E402
from harness.checks import parity as _parity  # noqa: E402
from harness.checks import response as _response  # noqa: E402
from harness.checks import shape as _shape  # noqa: E402
from harness.checks import stream as _stream  # noqa: E402
from harness.checks import upstream as _upstream  # noqa: E402
from harness.checks.live import LIVE_CHECKS  # noqa: E402

CHECKS.update(
    {
        "status": _response.check_status,
        "headers": _response.check_headers,
        "error": _response.check_error,
        "json": _response.check_json,
        "chunks": _response.check_chunks,
        "schema": _response.check_schema,
        "stream_order": _stream.check_stream_order,
        "usage": _response.check_usage,
        "finish_reason": _response.check_finish_reason,
        "upstream_calls": _upstream.check_upstream_calls,
        "upstream": _upstream.check_upstream,
        "upstream_headers": _upstream.check_upstream_headers,
        "upstream_schema": _upstream.check_upstream_schema,
        "stream_matches_nonstream": _parity.check_stream_matches_nonstream,
        "body": _response.check_body,
        "upstream_raw": _upstream.check_upstream_raw,
        "upstream_compare": _upstream.check_upstream_compare,
        "listener": _listener.check_listener,
        "elapsed": _listener.check_elapsed,
        "provider_accepts": _upstream.check_provider_accepts,
        "upstream_path": _upstream.check_upstream_path,
        "shape": _shape.check_shape,
        **LIVE_CHECKS,  # live forms of expectations about the scripted answer (harness/engine/live.py)
    }
)

__all__ = ["CHECKS", "Check", "Violation", "run_checks"]
